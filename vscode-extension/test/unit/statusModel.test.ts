import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionStatus } from '../../src/protocol';
import { blockerText, byPackage, engineLabel, formatDuration, formatRate, hookName, mutatorLine, quietText, sessionLine, statusText, summarize, targetRows } from '../../src/statusModel';
import { History } from '../../src/history';
import { renderChart } from '../../src/chartSvg';

function s(over: Partial<SessionStatus>): SessionStatus {
	return { package: 'example.com/calc', name: 'FuzzEval', uri: 'file:///w/calc_test.go', state: 'fuzzing', execs: 0, execsPerSec: 0, corpus: 0, covered: 0, blocks: 0, crashes: 0, ...over };
}

describe('summarize', () => {
	it('counts running sessions, sums execs/s of fuzzing ones and all crashes', () => {
		const sum = summarize({
			sessions: [
				s({ name: 'A', execsPerSec: 10000, crashes: 1 }),
				s({ name: 'B', state: 'building', execsPerSec: 99 }),
				s({ name: 'C', state: 'stopped', crashes: 2, execsPerSec: 0 }),
				s({ name: 'D', state: 'error', message: 'build failed' }),
			],
		});
		assert.deepEqual(sum, { running: 2, execsPerSec: 10000, crashes: 3, errors: 1, sessions: 4, quiet: 0 });
		assert.equal(statusText(sum), '$(bug) fuzzls: 2 running · 10k execs/s · 3 crashes · 1 failed');
	});
	it('handles no status and null sessions', () => {
		assert.equal(statusText(summarize(undefined)), '$(beaker) fuzzls');
		assert.equal(statusText(summarize({ sessions: null })), '$(beaker) fuzzls');
	});
	it('one running target without crashes', () => {
		assert.equal(statusText(summarize({ sessions: [s({ execsPerSec: 12345 })] })), '$(sync~spin) fuzzls: 1 running · 12.3k execs/s');
	});
	it('singular crash', () => {
		assert.equal(statusText(summarize({ sessions: [s({ state: 'stopped', crashes: 1 })] })), '$(bug) fuzzls: 1 crash');
	});
});

describe('coverage plateau', () => {
	const quiet = s({ execsPerSec: 4000, sinceCoverage: 312.4, execsSinceCoverage: 1234567 });
	it('says how long and how many execs without new coverage, from a minute on', () => {
		assert.equal(quietText(quiet), 'no new coverage for 5 min, 1.2M execs');
		assert.equal(quietText(s({ sinceCoverage: 59.9, execsSinceCoverage: 5000 })), undefined);
		assert.equal(quietText(s({})), undefined);
		assert.equal(sessionLine(quiet), 'FuzzEval: fuzzing · 4k execs/s · corpus 0 · no new coverage for 5 min, 1.2M execs');
		assert.equal(sessionLine(s({ sinceCoverage: 30 })), 'FuzzEval: fuzzing · 0 execs/s · corpus 0');
	});
	it('in the status bar: the one target, all of them, or how many', () => {
		assert.equal(statusText(summarize({ sessions: [quiet] })), '$(sync~spin) fuzzls: 1 running · 4k execs/s · no new coverage for 5 min, 1.2M execs');
		const other = s({ name: 'FuzzOther', execsPerSec: 1000, sinceCoverage: 7200, execsSinceCoverage: 9e6 });
		assert.equal(statusText(summarize({ sessions: [quiet, other] })), '$(sync~spin) fuzzls: 2 running · 5k execs/s · no new coverage for 5 min');
		const growing = s({ name: 'FuzzGrowing', execsPerSec: 1000, sinceCoverage: 3 });
		assert.equal(statusText(summarize({ sessions: [quiet, other, growing] })), '$(sync~spin) fuzzls: 3 running · 6k execs/s · 2 without new coverage');
		assert.equal(statusText(summarize({ sessions: [growing] })), '$(sync~spin) fuzzls: 1 running · 1k execs/s');
		// A session stopped on its plateau says so in its message, not as a running one.
		const stopped = s({ state: 'stopped', sinceCoverage: 300, execsSinceCoverage: 10, message: 'stopped after 5m0s without new coverage (the plateau setting); a save fuzzes it again' });
		assert.equal(statusText(summarize({ sessions: [stopped, growing] })), '$(sync~spin) fuzzls: 1 running · 1k execs/s');
		assert.equal(sessionLine(stopped), 'FuzzEval: stopped · corpus 0 · stopped after 5m0s without new coverage (the plateau setting); a save fuzzes it again');
	});
	for (const [sec, want] of [[0, '0 s'], [59.9, '59 s'], [60, '1 min'], [3599, '59 min'], [3600, '1 h'], [7500, '2 h 5 min']] as const) {
		it(`formatDuration(${sec}) → ${want}`, () => assert.equal(formatDuration(sec), want));
	}
});

describe('formatRate', () => {
	for (const [n, want] of [[0, '0'], [950.4, '950'], [1000, '1k'], [1234, '1.23k'], [12345, '12.3k'], [100000, '100k'], [2500000, '2.5M']] as const) {
		it(`${n} → ${want}`, () => assert.equal(formatRate(n), want));
	}
});

describe('sessionLine and byPackage', () => {
	it('describes a session', () => {
		assert.equal(sessionLine(s({ execsPerSec: 1500, covered: 87, blocks: 120, corpus: 14, crashes: 2 })), 'FuzzEval: fuzzing · 1.5k execs/s · 87/120 blocks · corpus 14 · 2 crashes');
		assert.equal(sessionLine(s({ execsPerSec: 1500, covered: 87, blocks: 120, corpus: 14, changed: 7, changedReached: 5 })), 'FuzzEval: fuzzing · 1.5k execs/s · 87/120 blocks · changed: 5/7 blocks reached · corpus 14');
	});
	it('names go test or libFuzzer when it fuzzes the target', () => {
		assert.equal(engineLabel(s({ engine: 'gotest' })), 'go test');
		assert.equal(engineLabel(s({ engine: 'libfuzzer' })), 'libFuzzer');
		assert.equal(engineLabel(s({ engine: 'fuzzls' })), '');
		assert.equal(engineLabel(s({})), '');
		assert.equal(sessionLine(s({ engine: 'gotest', execsPerSec: 900, corpus: 3 })), 'FuzzEval (go test): fuzzing · 900 execs/s · corpus 3');
	});
	it('groups and sorts', () => {
		const m = byPackage({ sessions: [s({ package: 'b', name: 'Z' }), s({ package: 'a', name: 'Y' }), s({ package: 'b', name: 'X' })] });
		assert.deepEqual([...m].map(([p, l]) => [p, l.map((x) => x.name)]), [['a', ['Y']], ['b', ['X', 'Z']]]);
	});
});

describe('History and chart', () => {
	it('samples, dedups idle samples, caps, and draws', () => {
		const h = new History(3);
		h.add({ sessions: [s({ execsPerSec: 100, covered: 1, blocks: 10, execs: 100 })] }, 1000);
		h.add({ sessions: [s({ execsPerSec: 0, covered: 2, blocks: 10, execs: 200 })] }, 2000);
		h.add({ sessions: [s({ execsPerSec: 0, covered: 2, blocks: 10, execs: 200 })] }, 3000);
		assert.equal(h.get('example.com/calc.FuzzEval').length, 2);
		h.add({ sessions: [s({ execsPerSec: 50, covered: 3, blocks: 10, execs: 300 })] }, 4000);
		h.add({ sessions: [s({ execsPerSec: 60, covered: 4, blocks: 10, execs: 400 })] }, 5000);
		const got = h.get('example.com/calc.FuzzEval');
		assert.deepEqual(got.map((x) => x.t), [2000, 4000, 5000]);
		const svg = renderChart(got, 'FuzzEval <calc>');
		assert.match(svg, /^<svg /);
		assert.match(svg, /class="coverage" fill="none" points="[\d., ]+"/);
		assert.match(svg, /FuzzEval &#60;calc&#62;/);
		assert.match(svg, /covered 4\/10 blocks/);
		assert.match(renderChart([], 'x'), /waiting for data/);
	});
});

describe('blockers', () => {
	const b = { uri: 'file:///w/magic.go', range: { start: { line: 16, character: 0 }, end: { line: 16, character: 80 } }, expr: 'x == 0x89504e47', want: '0x89504e47', nearest: '0x89504e00', frequent: '0x0', frequentCount: 12, count: 30, behind: 5, message: '' };
	it('says under a stopped target why it stopped, never under a fuzzing one', () => {
		const why = 'stopped after 20s without new coverage (the plateau setting); a save fuzzes it again';
		assert.deepEqual(targetRows(s({ state: 'stopped', message: why })).find((r) => r.label === 'stopped'), { label: 'stopped', description: why, icon: 'info' });
		assert.equal(targetRows(s({ state: 'fuzzing', message: why })).find((r) => r.label === 'fuzzing'), undefined);
		assert.equal(targetRows(s({ state: 'stopped' })).find((r) => r.label === 'stopped'), undefined);
	});
	it('labels a blocker with its comparison, and says what fuzzing fed it and what lies behind', () => {
		assert.deepEqual(blockerText(b), { label: 'x == 0x89504e47', description: 'nearest 0x89504e00, most frequent 0x0 · 5 blocks behind' });
		assert.deepEqual(blockerText({ ...b, frequent: '0x89504e00', behind: 1 }), { label: 'x == 0x89504e47', description: 'nearest 0x89504e00 · 1 block behind' });
	});
});

describe('mutators', () => {
	const mut = { name: 'example.com/expr.exprMutator', kind: 'mutator', execs: 12345, finds: 37, panics: 0 };
	const problem = 'panic: runtime error: index out of range [3] with length 3\n\ngoroutine 7 [running]:\nexample.com/expr.FuzzExpr.func2(...)';
	const gen = { name: 'example.com/expr.FuzzExpr.func2', kind: 'generator', execs: 2000000, finds: 1, panics: 3, problem };
	it('names a function without its package path', () => {
		assert.equal(hookName('example.com/expr.exprMutator'), 'exprMutator');
		assert.equal(hookName('example.com/expr.FuzzExpr.func1'), 'FuzzExpr.func1');
		assert.equal(hookName('gopkg.in/yaml%2ev3.(*mut).Mutate'), '(*mut).Mutate');
		assert.equal(hookName('main.mutate'), 'mutate');
		assert.equal(hookName('odd'), 'odd');
	});
	it('lists a row per mutator or generator under a target that has them, after its executions', () => {
		const plain = s({ corpus: 14, covered: 87, blocks: 120, execs: 2012345, execsPerSec: 1500 });
		assert.deepEqual(targetRows(plain).map((r) => r.label), ['corpus', 'coverage', 'executions']);
		const rows = targetRows({ ...plain, mutators: [mut, gen] });
		assert.deepEqual(rows.map((r) => r.label), ['corpus', 'coverage', 'executions', 'mutator exprMutator', 'generator FuzzExpr.func2']);
		assert.deepEqual(rows[3], { label: 'mutator exprMutator', description: '12,345 execs, 37 finds (0.3 %)', icon: 'wand', tooltip: 'mutator example.com/expr.exprMutator' });
		// A problem (its first panic with the stack, or why the target cannot use it) is a warning, in full in the tooltip.
		assert.deepEqual(rows[4], { label: 'generator FuzzExpr.func2', description: '2,000,000 execs, 1 find (< 0.1 %), 3 panics', icon: 'warning', tooltip: `generator example.com/expr.FuzzExpr.func2\n\n${problem}` });
		assert.equal(rows[2]?.description, '2,012,345 · 1.5k/s');
	});
	it('says what an unused one did, and why it is unused', () => {
		const unused = { name: 'example.com/n.FuzzInt.func1', kind: 'mutator', execs: 0, finds: 0, panics: 0, problem: 'the target takes no []byte or string argument: arguments (int)' };
		assert.equal(mutatorLine(unused), 'mutator FuzzInt.func1: 0 execs, 0 finds — the target takes no []byte or string argument: arguments (int)');
		assert.equal(mutatorLine({ ...mut, finds: 0, execs: 50 }), 'mutator exprMutator: 50 execs, 0 finds (0 %)');
	});
	it('in the status bar tooltip: one line each, with the first line of its problem', () => {
		assert.equal(mutatorLine(mut), 'mutator exprMutator: 12,345 execs, 37 finds (0.3 %)');
		assert.equal(mutatorLine(gen), 'generator FuzzExpr.func2: 2,000,000 execs, 1 find (< 0.1 %), 3 panics — panic: runtime error: index out of range [3] with length 3');
	});
});
