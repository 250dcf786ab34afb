import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionStatus } from '../../src/protocol';
import { byPackage, formatRate, sessionLine, statusText, summarize } from '../../src/statusModel';
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
		assert.deepEqual(sum, { running: 2, execsPerSec: 10000, crashes: 3, errors: 1, sessions: 4 });
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
