import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoverageModel } from '../../src/coverageModel';
import type { CoverageParams, Range } from '../../src/protocol';

const r = (sl: number, sc: number, el: number, ec: number): Range => ({ start: { line: sl, character: sc }, end: { line: el, character: ec } });
const uri = 'file:///w/calc.go';

function params(name: string, covered: Range[], uncovered: Range[] | null): CoverageParams {
	return { target: { package: 'example.com/calc', name }, files: [{ uri, covered, uncovered }] };
}

describe('CoverageModel', () => {
	it('merges targets: covered by any wins', () => {
		const m = new CoverageModel();
		m.update(params('FuzzA', [r(1, 0, 2, 0)], [r(3, 0, 4, 0), r(5, 0, 6, 0)]));
		m.update(params('FuzzB', [r(3, 0, 4, 0)], [r(1, 0, 2, 0), r(5, 0, 6, 0)]));
		assert.deepEqual(m.forFile(uri), { covered: [r(1, 0, 2, 0), r(3, 0, 4, 0)], uncovered: [r(5, 0, 6, 0)] });
	});
	it('replaces a target on the next notification and reports touched files', () => {
		const m = new CoverageModel();
		m.update(params('FuzzA', [r(1, 0, 2, 0)], []));
		const touched = m.update({ target: { package: 'example.com/calc', name: 'FuzzA' }, files: null });
		assert.deepEqual([...touched], [uri]);
		assert.deepEqual(m.forFile(uri), { covered: [], uncovered: [] });
	});
	it('moves ranges with edits until the next notification', () => {
		const m = new CoverageModel();
		m.update(params('FuzzA', [r(1, 0, 2, 0)], [r(4, 0, 5, 0)]));
		assert.equal(m.edit(uri, [{ range: r(0, 0, 0, 0), text: '\n' }]), true);
		assert.deepEqual(m.forFile(uri), { covered: [r(2, 0, 3, 0)], uncovered: [r(5, 0, 6, 0)] });
		assert.equal(m.edit('file:///other.go', [{ range: r(0, 0, 0, 0), text: '\n' }]), false);
		m.update(params('FuzzA', [r(1, 0, 2, 0)], []));
		assert.deepEqual(m.forFile(uri), { covered: [r(1, 0, 2, 0)], uncovered: [] });
	});
	it('normalizes URIs', () => {
		const m = new CoverageModel((u) => u.toLowerCase());
		m.update({ target: { package: 'p', name: 'F' }, files: [{ uri: 'FILE:///A.go', covered: [r(0, 0, 0, 1)], uncovered: null }] });
		assert.equal(m.forFile('file:///a.go').covered.length, 1);
	});
});
