import { describe, expect, it } from 'vitest';
import { type Repository, repositoryRoot, repositoryStaleCitations, staleCitations } from './citations.js';

/**
 * Every path and docs/design.md section a comment or document cites exists, and none sends the reader outside
 * the repository. What counts as a citation is written in test/docs/citations.ts.
 */
describe('citations', () => {
  it('point at files, folders and design sections that exist', () => {
    expect(repositoryStaleCitations(repositoryRoot)).toEqual([]);
  });

  const made: Repository = {
    exists: (path) =>
      ['docs/design.md', 'cloud/', 'cloud/app.ts', 'cloud/rules/', 'cloud/rules/opening/open.ts'].includes(
        path,
      ),
    designSections: new Set(['0', '4', '10', '10.5']),
  };

  it('name the line of a missing path, a missing section and a document outside the repository', () => {
    const text = [
      '/**',
      ' * Opens the gate (cloud/rules/opening/open.ts, docs/design.md section 4); the journal is',
      ' * cloud/rules/journal/gone.ts (docs/design.md',
      ' * sections 10.5 and 13.2), see also ./missing.ts and ../../../../far.ts.',
      ` * As the ${'decisions'}.md file says.`,
      ' */',
    ].join('\n');
    expect(staleCitations('cloud/rules/x/y.ts', text, made)).toEqual([
      'cloud/rules/x/y.ts:3 cites missing cloud/rules/journal/gone.ts',
      'cloud/rules/x/y.ts:4 cites missing ./missing.ts (cloud/rules/x/missing.ts)',
      'cloud/rules/x/y.ts:4 cites ../../../../far.ts, outside the repository',
      `cloud/rules/x/y.ts:5 cites ${'decisions'}.md, which is not in the repository`,
      'cloud/rules/x/y.ts:4 cites docs/design.md section 13.2',
    ]);
  });

  it('read every number of a list, and the other forms of a design citation', () => {
    const text = 'design.md sections 4, 10 and 11; design 9.9; section 13 of the design; docs/design.md 14';
    expect(staleCitations('README.md', text, made)).toEqual([
      'README.md:1 cites docs/design.md section 11',
      'README.md:1 cites docs/design.md section 9.9',
      'README.md:1 cites docs/design.md section 14',
      'README.md:1 cites docs/design.md section 13',
    ]);
  });

  it('read a relative .js citation as the .ts it is compiled from', () => {
    expect(staleCitations('cloud/rules/y.ts', '// as ./opening/open.js does', made)).toEqual([]);
  });

  it('leave globs, placeholders, elisions, URLs and other documents alone', () => {
    const text = [
      'Each `cloud/*/` folder, `cloud/<floor>/README.md`, cloud/rules/.../state.ts and',
      'https://example.com/cloud/nowhere.ts, RFC 9110 section 15.5 and MQTT 3.1.1 section 3.2.2.3,',
      'cloud/rules/ and cloud/app.ts and design 10.5, section 10 of the design.',
    ].join('\n');
    expect(staleCitations('README.md', text, made)).toEqual([]);
  });

  it('read a bare section number as design.md own inside docs/design.md', () => {
    expect(staleCitations('docs/design.md', 'as the MQTT part says (section 7)', made)).toEqual([
      'docs/design.md:1 cites docs/design.md section 7',
    ]);
  });
});
