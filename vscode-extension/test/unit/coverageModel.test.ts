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
		assert.deepEqual(m.forFile(uri), { covered: [r(1, 0, 2, 0), r(3, 0, 4, 0)], uncovered: [r(5, 0, 6, 0)], uncoveredChanged: [] });
	});
	it('replaces a target on the next notification and reports touched files', () => {
		const m = new CoverageModel();
		m.update(params('FuzzA', [r(1, 0, 2, 0)], []));
		const touched = m.update({ target: { package: 'example.com/calc', name: 'FuzzA' }, files: null });
		assert.deepEqual([...touched], [uri]);
		assert.deepEqual(m.forFile(uri), { covered: [], uncovered: [], uncoveredChanged: [] });
	});
	it('moves ranges with edits until the next notification', () => {
		const m = new CoverageModel();
		m.update(params('FuzzA', [r(1, 0, 2, 0)], [r(4, 0, 5, 0)]));
		assert.equal(m.edit(uri, [{ range: r(0, 0, 0, 0), text: '\n' }]), true);
		assert.deepEqual(m.forFile(uri), { covered: [r(2, 0, 3, 0)], uncovered: [r(5, 0, 6, 0)], uncoveredChanged: [] });
		assert.equal(m.edit('file:///other.go', [{ range: r(0, 0, 0, 0), text: '\n' }]), false);
		m.update(params('FuzzA', [r(1, 0, 2, 0)], []));
		assert.deepEqual(m.forFile(uri), { covered: [r(1, 0, 2, 0)], uncovered: [], uncoveredChanged: [] });
	});
	it('keeps the uncovered changed blocks apart, moved with edits; covered by any target wins', () => {
		const m = new CoverageModel();
		m.update({ target: { package: 'p', name: 'FuzzA' }, files: [{ uri, covered: [r(1, 0, 2, 0)], uncovered: [r(7, 0, 8, 0)], uncoveredChanged: [r(3, 0, 4, 0), r(5, 0, 6, 0)] }] });
		m.update({ target: { package: 'p', name: 'FuzzB' }, files: [{ uri, covered: [r(5, 0, 6, 0)], uncovered: [r(3, 0, 4, 0), r(7, 0, 8, 0)] }] });
		assert.deepEqual(m.forFile(uri), { covered: [r(1, 0, 2, 0), r(5, 0, 6, 0)], uncovered: [r(7, 0, 8, 0)], uncoveredChanged: [r(3, 0, 4, 0)] });
		assert.equal(m.edit(uri, [{ range: r(0, 0, 0, 0), text: '\n' }]), true);
		assert.deepEqual(m.forFile(uri).uncoveredChanged, [r(4, 0, 5, 0)]);
	});
	it('normalizes URIs', () => {
		const m = new CoverageModel((u) => u.toLowerCase());
		m.update({ target: { package: 'p', name: 'F' }, files: [{ uri: 'FILE:///A.go', covered: [r(0, 0, 0, 1)], uncovered: null }] });
		assert.equal(m.forFile('file:///a.go').covered.length, 1);
	});
});
