import { main } from './cli/main.js';

/**
 * The `gatelink-device` program (`npm run device`, bin/gatelink-device.mjs): the daemon and the installer's
 * subcommands. It exits once the command is done, so that nothing left open (a socket, a port) keeps it alive.
 */
process.exit(await main(process.argv.slice(2)));
