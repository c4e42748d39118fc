import { build, SUITE_TREE } from '../helpers/compiled-tree.ts';

// Every `fire-api` the tests start as a child (the commands, served nodes, the bench's servers) runs
// the compiled tree, as `npm start` and the systemd unit do: built once a run (nothing to do when the
// sources are unchanged), it spares each child tsx's start (about half of a short command's CPU).
// vitest.config.ts hands COMPILED_DIR=SUITE_TREE to the test files; a test that needs the sources
// through tsx sets COMPILED_DIR to ''.
export default async function setup(): Promise<void> {
  const said = await build(SUITE_TREE);
  if (said.trim() !== '') console.log(said.trim());
}
