import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Range } from '../../src/protocol';
import { applyChanges, shiftPosition, shiftRange, type TextChange } from '../../src/rangeShift';

const r = (sl: number, sc: number, el: number, ec: number): Range => ({ start: { line: sl, character: sc }, end: { line: el, character: ec } });
const change = (range: Range, text: string): TextChange => ({ range, text });
const insert = (l: number, c: number, text: string) => change(r(l, c, l, c), text);

describe('shiftRange', () => {
	const block = r(5, 4, 7, 2); // lines 5:4 .. 7:2
	const cases: Array<{ desc: string; c: TextChange; want: Range | undefined }> = [
		{ desc: 'insert on an earlier line, no newline', c: insert(2, 0, 'abc'), want: block },
		{ desc: 'insert a line above', c: insert(2, 0, 'x\n'), want: r(6, 4, 8, 2) },
		{ desc: 'delete two lines above', c: change(r(1, 0, 3, 0), ''), want: r(3, 4, 5, 2) },
		{ desc: 'insert on the start line before the block', c: insert(5, 1, 'ab'), want: r(5, 6, 7, 2) },
		{ desc: 'insert exactly at the start moves the block', c: insert(5, 4, 'ab'), want: r(5, 6, 7, 2) },
		{ desc: 'insert exactly at the end leaves it', c: insert(7, 2, 'zz'), want: block },
		{ desc: 'insert after the end', c: insert(7, 5, '\n\n'), want: block },
		{ desc: 'insert inside, same line', c: insert(6, 0, 'abc'), want: block },
		{ desc: 'insert inside on the end line grows the end', c: insert(7, 0, 'abc'), want: r(5, 4, 7, 5) },
		{ desc: 'newline inside grows the block', c: insert(6, 3, '\n'), want: r(5, 4, 8, 2) },
		{ desc: 'delete inside, joining the end line', c: change(r(6, 1, 7, 1), ''), want: r(5, 4, 6, 2) },
		{ desc: 'edit across the start drops it', c: change(r(4, 0, 5, 6), 'q'), want: undefined },
		{ desc: 'edit across the end drops it', c: change(r(7, 0, 8, 0), ''), want: undefined },
		{ desc: 'replace the whole block and more drops it', c: change(r(5, 0, 9, 0), ''), want: undefined },
		{ desc: 'multi-line insert before, on the start line', c: insert(5, 0, 'a\nbc'), want: r(6, 6, 8, 2) },
	];
	for (const tc of cases) {
		it(tc.desc, () => assert.deepEqual(shiftRange(block, tc.c), tc.want));
	}
});

describe('shiftPosition', () => {
	it('rejects a position inside the change', () => {
		assert.throws(() => shiftPosition({ line: 2, character: 3 }, change(r(2, 0, 2, 5), '')));
	});
	it('handles CRLF in inserted text', () => {
		assert.deepEqual(shiftPosition({ line: 3, character: 1 }, insert(1, 0, 'a\r\nb\r\n')), { line: 5, character: 1 });
	});
});

describe('applyChanges', () => {
	it('applies changes in order and drops cut ranges', () => {
		const ranges = [r(0, 0, 0, 5), r(2, 0, 3, 0), r(5, 0, 5, 4)];
		// Type a line at the top, then delete from the end of line 2 into line 3,
		// across the start of the second range (now at 3:0).
		const got = applyChanges(ranges, [insert(0, 0, '// x\n'), change(r(2, 5, 3, 2), '')]);
		assert.deepEqual(got, [r(1, 0, 1, 5), r(5, 0, 5, 4)]);
	});
});
