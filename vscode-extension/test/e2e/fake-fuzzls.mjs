#!/usr/bin/env node
// A stand-in for `fuzzls serve`, for developing and checking the extension's side of
// the end-to-end test without the real daemon (FUZZLS_E2E_DAEMON=fake). It speaks
// just enough LSP over stdio to play the calc scenario: a "▶ Fuzz" code lens on each
// func FuzzXxx; fuzzls.start sends fuzzls/status and fuzzls/coverage for the files of
// the package, then a crash diagnostic on the line marked `// BUG`, with the
// "Add input to seed corpus" code action as a WorkspaceEdit. It fuzzes nothing.
// The real test runs the real binary.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

if (process.argv[2] !== 'serve') {
	process.stderr.write('fake-fuzzls: only "serve" is supported\n');
	process.exit(2);
}

let buf = Buffer.alloc(0);
const docs = new Map(); // uri → text
let nextId = 1;
const sessions = new Map(); // name → status
let crash;

function send(msg) {
	const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...msg }), 'utf8');
	process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
	process.stdout.write(body);
}
const notify = (method, params) => send({ method, params });
const log = (message) => notify('window/logMessage', { type: 3, message: `fake-fuzzls: ${message}` });

process.stdin.on('data', (chunk) => {
	buf = Buffer.concat([buf, chunk]);
	for (;;) {
		const sep = buf.indexOf('\r\n\r\n');
		if (sep < 0) return;
		const m = /Content-Length: (\d+)/i.exec(buf.subarray(0, sep).toString());
		const len = Number(m?.[1] ?? 0);
		if (buf.length < sep + 4 + len) return;
		const msg = JSON.parse(buf.subarray(sep + 4, sep + 4 + len).toString('utf8'));
		buf = buf.subarray(sep + 4 + len);
		handle(msg);
	}
});
process.stdin.on('end', () => process.exit(0));

function text(uri) {
	if (docs.has(uri)) return docs.get(uri);
	try {
		return fs.readFileSync(fileURLToPath(uri), 'utf8');
	} catch {
		return '';
	}
}

function lenses(uri) {
	const out = [];
	text(uri).split('\n').forEach((line, i) => {
		const m = /^func (Fuzz\w*)\(/.exec(line);
		if (!m) return;
		const s = sessions.get(m[1]);
		const running = s && s.state === 'fuzzing';
		out.push({
			range: { start: { line: i, character: 0 }, end: { line: i, character: 0 } },
			command: running
				? { title: `■ Stop · ${s.execsPerSec} execs/s`, command: 'fuzzls.stop', arguments: [{ uri, target: m[1] }] }
				: { title: '▶ Fuzz', command: 'fuzzls.start', arguments: [{ uri, target: m[1] }] },
		});
	});
	return out;
}

// Coverage of every .go file (not _test.go) beside the test file: each line with
// code is a block; the BUG line is uncovered until the crash.
function coverage(dir, hitBug) {
	const files = [];
	for (const f of fs.readdirSync(dir)) {
		if (!f.endsWith('.go') || f.endsWith('_test.go')) continue;
		const uri = pathToFileURL(path.join(dir, f)).href;
		const covered = [];
		const uncovered = [];
		text(uri).split('\n').forEach((line, i) => {
			const t = line.trim();
			if (t === '' || t.startsWith('//') || t === '}' || /^(package|import|func|type)\b/.test(t)) return;
			const start = line.length - line.trimStart().length;
			const r = { start: { line: i, character: start }, end: { line: i, character: line.length } };
			(line.includes('// BUG') && !hitBug ? uncovered : i % 7 === 3 ? uncovered : covered).push(r);
		});
		files.push({ uri, covered, uncovered });
	}
	return files;
}

function start(arg) {
	const uri = arg?.uri;
	const name = arg?.target ?? 'FuzzEval';
	const dir = path.dirname(fileURLToPath(uri));
	const target = { package: 'example.com/calc', name };
	const st = { package: target.package, name, uri, state: 'building', execs: 0, execsPerSec: 0, corpus: 3, covered: 0, blocks: 40, crashes: 0 };
	sessions.set(name, st);
	const status = () => notify('fuzzls/status', { sessions: [...sessions.values()] });
	status();
	setTimeout(() => {
		Object.assign(st, { state: 'fuzzing', execs: 5000, execsPerSec: 12345, covered: 30 });
		status();
		send({ id: nextId++, method: 'workspace/codeLens/refresh' });
		notify('fuzzls/coverage', { target, files: coverage(dir, false) });
	}, 800);
	setTimeout(() => {
		const calc = path.join(dir, 'calc.go');
		const calcUri = pathToFileURL(calc).href;
		const lines = text(calcUri).split('\n');
		const line = lines.findIndex((l) => l.includes('// BUG'));
		const col = lines[line].length - lines[line].trimStart().length;
		const input = 'go test fuzz v1\nstring("0/0")\n';
		crash = { crash: 'fake0001', target, kind: 'panic', input, minimized: true, line, calcUri, dir, testUri: uri };
		Object.assign(st, { execs: 40000, covered: 31, crashes: 1 });
		status();
		notify('fuzzls/coverage', { target, files: coverage(dir, true) });
		notify('textDocument/publishDiagnostics', {
			uri: calcUri,
			diagnostics: [
				{
					range: { start: { line, character: col }, end: { line, character: lines[line].length } },
					severity: 1,
					source: 'fuzzls',
					code: 'panic',
					message: `${name}: panic: runtime error: integer divide by zero\ninput: "0/0"`,
					data: { crash: crash.crash, target, kind: 'panic', input, minimized: true },
				},
			],
		});
	}, 2500);
}

function codeActions(params) {
	if (!crash) return [];
	const diags = params.context.diagnostics.filter((d) => d.source === 'fuzzls');
	if (diags.length === 0) return [];
	const file = path.join(crash.dir, 'testdata', 'fuzz', crash.target.name, 'fake0001');
	const uri = pathToFileURL(file).href;
	return [
		{
			title: 'Add input to seed corpus',
			kind: 'quickfix',
			diagnostics: diags,
			isPreferred: true,
			edit: {
				documentChanges: [
					{ kind: 'create', uri, options: { ignoreIfExists: true } },
					{ textDocument: { uri, version: null }, edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: crash.input }] },
				],
			},
		},
	];
}

function handle(msg) {
	const { id, method, params } = msg;
	const reply = (result) => send({ id, result });
	if (method === undefined) return; // a response to our request
	switch (method) {
		case 'initialize':
			log(`initializationOptions ${JSON.stringify(params.initializationOptions)}`);
			return reply({
				capabilities: {
					textDocumentSync: { openClose: true, change: 1, save: true },
					codeLensProvider: {},
					codeActionProvider: { codeActionKinds: ['quickfix'] },
					executeCommandProvider: { commands: ['fuzzls.start', 'fuzzls.stop', 'fuzzls.addToCorpus', 'fuzzls.status', 'fuzzls.showInput'] },
				},
				serverInfo: { name: 'fake-fuzzls', version: '0' },
			});
		case 'initialized':
			process.stderr.write('fake-fuzzls: serving\n');
			return log('initialized');
		case 'shutdown':
			return reply(null);
		case 'exit':
			return process.exit(0);
		case 'textDocument/didOpen':
			docs.set(params.textDocument.uri, params.textDocument.text);
			return;
		case 'textDocument/didChange':
			docs.set(params.textDocument.uri, params.contentChanges[params.contentChanges.length - 1].text);
			return;
		case 'workspace/didChangeConfiguration':
			return log(`settings ${JSON.stringify(params.settings)}`);
		case 'textDocument/codeLens':
			return reply(lenses(params.textDocument.uri));
		case 'textDocument/codeAction':
			return reply(codeActions(params));
		case 'workspace/executeCommand':
			log(`executeCommand ${params.command} ${JSON.stringify(params.arguments)}`);
			if (params.command === 'fuzzls.start') start(params.arguments?.[0]);
			if (params.command === 'fuzzls.status') return reply({ sessions: [...sessions.values()] });
			if (params.command === 'fuzzls.showInput') return reply({ input: crash?.input ?? '' });
			return reply(null);
		default:
			if (id !== undefined) send({ id, error: { code: -32601, message: `method not found: ${method}` } });
	}
}
