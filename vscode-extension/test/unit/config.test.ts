import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coverageDecorator, daemonSettings, defaultDecorator, didChangeConfigurationSettings, expandHome, type Getter } from '../../src/config';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { exeName, findBinary, platformDir } from '../../src/binary';
import { findFuzzTargets } from '../../src/targets';

function getter(values: Record<string, unknown>): Getter {
	return <T>(key: string, def: T): T => (key in values ? (values[key] as T) : def);
}

describe('daemonSettings (initializationOptions)', () => {
	it('defaults', () => {
		assert.deepEqual(daemonSettings(getter({})), { autoStart: 'off', parallel: 0, keepFuzzing: true, leaks: false, blockers: false, timeout: '', rssLimitMB: 2048, nice: 10, cacheDir: '', syncDir: '', buildFlags: [], plateau: '', engine: 'fuzzls' });
	});
	it('passes the settings through, leaving out the client-only ones', () => {
		const got = daemonSettings(getter({ autoStart: 'workspace', parallel: 3, keepFuzzing: false, leaks: true, blockers: true, timeout: ' 2s ', plateau: ' 30m ', rssLimitMB: 512, nice: 0, cacheDir: '/tmp/c', buildFlags: ['-tags=integration', ' -race ', 3], path: '/x', coverageDecorator: 'gutter', engine: 'gotest' }));
		assert.deepEqual(got, { autoStart: 'workspace', parallel: 3, keepFuzzing: false, leaks: true, blockers: true, timeout: '2s', rssLimitMB: 512, nice: 0, cacheDir: '/tmp/c', syncDir: '', buildFlags: ['-tags=integration', '-race'], plateau: '30m', engine: 'gotest' });
		assert.deepEqual(didChangeConfigurationSettings(got), { fuzzls: got });
	});
	it('replaces nonsense by defaults and expands ~', () => {
		const home = process.env.HOME;
		process.env.HOME = '/home/u';
		try {
			const got = daemonSettings(getter({ autoStart: 'always', parallel: -1, timeout: '', rssLimitMB: 'lots', nice: 25, cacheDir: '~/c', buildFlags: '-race', engine: 'afl' }));
			assert.deepEqual(got, { autoStart: 'off', parallel: 0, keepFuzzing: true, leaks: false, blockers: false, timeout: '', rssLimitMB: 2048, nice: 10, cacheDir: '/home/u/c', syncDir: '', buildFlags: [], plateau: '', engine: 'fuzzls' });
		} finally {
			process.env.HOME = home;
		}
	});
});

describe('coverageDecorator', () => {
	it('defaults, a bare string, and an object', () => {
		assert.deepEqual(coverageDecorator(getter({})), defaultDecorator);
		assert.equal(coverageDecorator(getter({ coverageDecorator: 'gutter' })).type, 'gutter');
		const d = coverageDecorator(getter({ coverageDecorator: { type: 'both', coveredHighlightColor: 'green', showUncovered: false, type2: 1 } }));
		assert.deepEqual(d, { ...defaultDecorator, type: 'both', coveredHighlightColor: 'green', showUncovered: false });
		assert.equal(coverageDecorator(getter({ coverageDecorator: { type: 'rainbow' } })).type, 'highlight');
	});
});

describe('findBinary', () => {
	it('prefers the setting, then the bundled binary, then PATH', () => {
		assert.deepEqual(findBinary('/opt/fuzzls', '/ext', () => true), { command: '/opt/fuzzls', source: 'setting' });
		assert.deepEqual(findBinary('', '/ext', () => true), { command: `/ext/bin/${platformDir()}/fuzzls`, source: 'bundled' });
		assert.deepEqual(findBinary('  ', '/ext', () => false), { command: 'fuzzls', source: 'PATH' });
	});
	it('names platforms as vsce targets do', () => {
		assert.equal(platformDir('linux', 'x64'), 'linux-x64');
		assert.equal(platformDir('darwin', 'arm64'), 'darwin-arm64');
		assert.equal(platformDir('win32', 'x64'), 'win32-x64');
		assert.equal(exeName('win32'), 'fuzzls.exe');
		assert.equal(exeName('darwin'), 'fuzzls');
	});
	it('finds the bundled binary of each platform, fuzzls.exe on Windows', () => {
		const seen: string[] = [];
		const exists = (p: string) => {
			seen.push(p);
			return true;
		};
		assert.deepEqual(findBinary('', 'C:\\Users\\me\\.vscode\\extensions\\fuzzls.fuzzls-0.1.0-win32-x64', exists, 'win32', 'x64'), {
			command: 'C:\\Users\\me\\.vscode\\extensions\\fuzzls.fuzzls-0.1.0-win32-x64\\bin\\win32-x64\\fuzzls.exe',
			source: 'bundled',
		});
		assert.deepEqual(findBinary('', '/Users/me/.vscode/extensions/fuzzls.fuzzls-0.1.0-darwin-arm64', exists, 'darwin', 'arm64'), {
			command: '/Users/me/.vscode/extensions/fuzzls.fuzzls-0.1.0-darwin-arm64/bin/darwin-arm64/fuzzls',
			source: 'bundled',
		});
		assert.deepEqual(findBinary('', '/home/me/.vscode/extensions/x', exists, 'linux', 'arm64').command, '/home/me/.vscode/extensions/x/bin/linux-arm64/fuzzls');
		assert.equal(seen.length, 3);
		// No binary for this platform in the .vsix (win32-arm64): fuzzls.exe on PATH.
		assert.deepEqual(findBinary('', 'C:\\ext', () => false, 'win32', 'arm64'), { command: 'fuzzls.exe', source: 'PATH' });
		assert.deepEqual(findBinary('C:\\tools\\fuzzls.exe', 'C:\\ext', exists, 'win32', 'x64'), { command: 'C:\\tools\\fuzzls.exe', source: 'setting' });
	});
	it('reads a leading ~ as the home folder: $HOME, or %USERPROFILE% on Windows (no HOME)', () => {
		assert.equal(expandHome('~\\fuzz\\cache', 'C:\\Users\\me'), 'C:\\Users\\me\\fuzz\\cache');
		assert.equal(expandHome('~/fuzz/cache', 'C:\\Users\\me'), 'C:\\Users\\me/fuzz/cache');
		assert.equal(expandHome('~', '/home/me'), '/home/me');
		assert.equal(expandHome('~me/x', '/home/me'), '~me/x');
		assert.equal(daemonSettings(getter({ cacheDir: '~/c' })).cacheDir, os.homedir() + '/c');
	});
	it('reads a leading ~ as the home folder, with either separator', () => {
		assert.equal(findBinary('~/go/bin/fuzzls', '/ext').command, os.homedir() + '/go/bin/fuzzls');
		assert.equal(findBinary('~\\go\\bin\\fuzzls.exe', '/ext').command, os.homedir() + '\\go\\bin\\fuzzls.exe');
		assert.equal(findBinary('/a/~/fuzzls', '/ext').command, '/a/~/fuzzls');
	});
});

describe('findFuzzTargets', () => {
	it('finds func FuzzXxx(f *testing.F) only', () => {
		const src = ['package calc', '', 'func FuzzEval(f *testing.F) {', '}', 'func FuzzNot(t *testing.T) {}', 'func helperFuzz(f *testing.F) {}', 'func Fuzz(ff *testing.F) {}', '\tfunc FuzzIndented(f *testing.F) {}'].join('\n');
		assert.deepEqual(findFuzzTargets(src), [{ name: 'FuzzEval', line: 2 }, { name: 'Fuzz', line: 6 }]);
	});
	it('takes the names go test takes (the table the Go rule is checked against)', () => {
		const file = path.join(__dirname, '..', '..', '..', '..', 'testdata', 'fuzz-target-names.json');
		const table = JSON.parse(fs.readFileSync(file, 'utf8')) as { names: Record<string, boolean> };
		for (const [name, target] of Object.entries(table.names)) {
			const found = findFuzzTargets(`func ${name}(f *testing.F) {}`).map((t) => t.name);
			assert.deepEqual(found, target ? [name] : [], name);
		}
	});
});
