import type { MemberRole } from '../../foundation/db/schema.js';

/**
 * A member's role in words, with what it may do (docs/design.md section 11.1), wherever the area names one. The
 * stored `member` reads as "Developer".
 */
export const ROLE_WORDS: Record<MemberRole, { name: string; may: string }> = {
  owner: { name: 'Owner', may: 'do everything a developer does, and manage the members' },
  member: {
    name: 'Developer',
    may: 'manage API access, the callback address and events, the logo and the details',
  },
  viewer: { name: 'Viewer', may: 'look at every page and change nothing' },
};
