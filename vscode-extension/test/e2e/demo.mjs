// The demo: a real VS Code (code-server) on 127.0.0.1 with the freshly packaged
// extension and a copy of testdata/calc open. Prints the address and runs until
// interrupted (Ctrl-C), then stops code-server and removes its folder.
//
//   node test/e2e/demo.mjs [path/to/fuzzls-linux-x64.vsix]
//   FUZZLS_DEMO_PORT=8080 (default: a free port), FUZZLS_DEMO_KEEP=1 keeps the folder.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { copyWorkspace, extDir, freePort, installExtension, layout, repoRoot, startCodeServer } from './codeServer.mjs';

const vsix = path.resolve(process.argv[2] || path.join(extDir, 'fuzzls-linux-x64.vsix'));
if (!fs.existsSync(vsix)) {
	console.error(`no ${vsix}: run npm run package first`);
	process.exit(1);
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fuzzls-demo-'));
const d = layout(dir);
const ws = copyWorkspace(path.join(repoRoot, 'testdata', 'calc'), path.join(dir, 'calc'));
installExtension(d, vsix);
const port = Number(process.env.FUZZLS_DEMO_PORT) || (await freePort());
const server = await startCodeServer(d, ws, port);
const url = `${server.base}/?folder=${ws}`;
console.log(`fuzzls demo: VS Code with the fuzzls extension and ${ws}`);
console.log(`open ${url}`);
console.log('(Ctrl-C stops it)');
const stop = () => {
	server.stop();
	if (!process.env.FUZZLS_DEMO_KEEP) {
		fs.rmSync(dir, { recursive: true, force: true });
	}
	process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
setInterval(() => undefined, 1 << 30);
