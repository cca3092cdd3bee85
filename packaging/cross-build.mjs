// Building the controller's tree for another CPU than this machine's (docs/design.md section 12.4.1): the
// settings node-gyp reads to compile the GPIO module (epoll, a nan addon with no prebuilt binary) with Debian's
// cross compiler against the Node.js headers here, and the module version (ABI) those headers are for.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** `process.arch` of the boards a release can be built for (shared/releases/manifest.ts RELEASE_ARCHES). */
export const RELEASE_ARCHES = ['arm64', 'x64'];

/** Debian's cross toolchain prefix per target (packages g++-aarch64-linux-gnu, g++-x86-64-linux-gnu). */
const TOOLCHAINS = { arm64: 'aarch64-linux-gnu', x64: 'x86_64-linux-gnu' };
const COMPILER_PACKAGES = { arm64: 'g++-aarch64-linux-gnu', x64: 'g++-x86-64-linux-gnu' };

function onPath(command) {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The Node.js headers node-gyp builds against: npm's `nodedir` setting when it names headers, else the
 * running Node.js's own (Debian's nodejs installs them under /usr/include/node). Never a download: the
 * headers of the Node.js version the board runs are what matters, and they are the same on every CPU.
 */
export function nodeHeadersDir() {
  const candidates = [
    process.env.npm_config_nodedir,
    npmSetting('nodedir'),
    dirname(dirname(process.execPath)),
  ];
  return candidates.find((dir) => dir && existsSync(join(dir, 'include', 'node', 'node_version.h')));
}

function npmSetting(name) {
  try {
    const value = execFileSync('npm', ['config', 'get', name], { encoding: 'utf8' }).trim();
    return value === 'undefined' || value === 'null' ? undefined : value;
  } catch {
    return undefined;
  }
}

/** NODE_MODULE_VERSION of the headers (115 for Node.js 20): what a native module built here loads on. */
export function headersAbi() {
  const dir = nodeHeadersDir();
  if (!dir) return process.versions.modules;
  const header = readFileSync(join(dir, 'include', 'node', 'node_version.h'), 'utf8');
  return /#define NODE_MODULE_VERSION (\d+)/.exec(header)?.[1] ?? process.versions.modules;
}

/** The environment for `npm rebuild epoll` to compile for `arch`; `fail(message)` when something is missing. */
export function crossBuildEnv(arch, fail) {
  const prefix = TOOLCHAINS[arch];
  if (!onPath(`${prefix}-g++`)) {
    fail(
      `${prefix}-g++ is not installed: apt-get install ${COMPILER_PACKAGES[arch]} (the GPIO module is compiled)`,
    );
  }
  const headers = nodeHeadersDir();
  if (!headers)
    fail('no Node.js headers (include/node) found: set npm_config_nodedir to a Node.js with them');
  return {
    npm_config_arch: arch,
    npm_config_target_arch: arch,
    npm_config_nodedir: headers,
    CC: `${prefix}-gcc`,
    CXX: `${prefix}-g++`,
    LINK: `${prefix}-g++`,
    AR: `${prefix}-ar`,
  };
}
