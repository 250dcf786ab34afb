import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { debugConfiguration, listeningAt } from '../../src/debugConfig';
import type { DebugResult } from '../../src/protocol';

const res: DebugResult = {
	target: { package: 'example.com/calc', name: 'FuzzEval' },
	dir: '/w/calc',
	seed: '5f0e6c2a1b9d4e37',
	seedURI: 'file:///w/calc/testdata/fuzz/FuzzEval/5f0e6c2a1b9d4e37',
	run: '^FuzzEval$/^5f0e6c2a1b9d4e37$',
	buildFlags: ['-race', '-ldflags=-X main.v=1'],
	uri: 'file:///w/calc/calc.go',
	line: 66,
	dlv: '/home/u/go/bin/dlv',
	args: ['test', "--build-flags=-race '-ldflags=-X main.v=1'", '.', '--', '-test.run=^FuzzEval$/^5f0e6c2a1b9d4e37$'],
	command: "cd /w/calc && /home/u/go/bin/dlv test … \n(dlv) break /w/calc/calc.go:67\n(dlv) continue",
};

describe('debugConfiguration', () => {
	it("is vscode-go's go type in test mode on the seed alone when the Go extension is there", () => {
		assert.deepEqual(debugConfiguration(res, true), {
			type: 'go', request: 'launch', name: "Debug FuzzEval's crash (seed 5f0e6c2a1b9d4e37)", mode: 'test', program: '/w/calc',
			args: ['-test.run', '^FuzzEval$/^5f0e6c2a1b9d4e37$'], buildFlags: "-race '-ldflags=-X main.v=1'", cwd: '/w/calc',
		});
	});
	it("is fuzzls-dlv with the daemon's dlv without it", () => {
		const c = debugConfiguration({ ...res, buildFlags: [], args: ['test', '.', '--', '-test.run=' + res.run] }, false);
		assert.equal(c.type, 'fuzzls-dlv');
		assert.equal(c.dlvPath, '/home/u/go/bin/dlv');
		assert.equal(c.buildFlags, '');
		assert.deepEqual(c.args, ['-test.run', res.run]);
		assert.equal(debugConfiguration({ ...res, dlv: '' }, false).dlvPath, 'dlv');
	});
});

describe('listeningAt', () => {
	it("reads dlv dap's address", () => {
		assert.deepEqual(listeningAt('DAP server listening at: 127.0.0.1:41234\n'), { host: '127.0.0.1', port: 41234 });
		assert.deepEqual(listeningAt('DAP server listening at: [::1]:5000\nmore'), { host: '::1', port: 5000 });
		assert.equal(listeningAt('DAP server listening at: 127.0.0.1:412'), undefined); // the line is not whole yet
		assert.equal(listeningAt('could not launch process'), undefined);
	});
});
