// Keeping coverage ranges on the right text while the user edits.
//
// The daemon's ranges describe the text of the last build. Between a change and the
// next fuzzls/coverage notification, the extension moves them with the text: a range
// wholly before an edit stays, one wholly after it shifts, one that contains the edit
// grows or shrinks with it, and one that overlaps it partly is dropped (that block is
// being rewritten; the next build will say what it covers).
//
// This module has no dependency on VS Code: positions are the protocol's
// (zero-based line, UTF-16 character), which vscode.Position also satisfies.

import type { Position, Range } from './protocol';

/** One content change, as in vscode.TextDocumentContentChangeEvent. */
export interface TextChange {
	readonly range: Range;
	readonly text: string;
}

export function comparePositions(a: Position, b: Position): number {
	return a.line - b.line || a.character - b.character;
}

/**
 * Where position p ends up after `change` replaced change.range. p must not lie
 * strictly inside change.range; a position before the range stays, and one at its
 * start stays too unless the change is an insertion there (then it moves).
 */
export function shiftPosition(p: Position, change: TextChange): Position {
	const { start, end } = change.range;
	if (comparePositions(p, end) < 0) {
		if (comparePositions(p, start) > 0) {
			throw new Error('shiftPosition: position inside the changed range');
		}
		return p;
	}
	const lines = change.text.split(/\r\n|\r|\n/);
	const added = lines.length - 1;
	const lastLen = lines[lines.length - 1].length;
	if (p.line === end.line) {
		// On the last line of the replaced text: the rest of that line follows the
		// inserted text.
		const base = added === 0 ? start.character + lastLen : lastLen;
		return { line: start.line + added, character: base + (p.character - end.character) };
	}
	return { line: p.line + start.line + added - end.line, character: p.character };
}

/**
 * shiftRange returns range r after `change`, or undefined when the change overlaps
 * r without being inside it. Ranges are end-exclusive: an insertion exactly at r's
 * end leaves r as it is, one exactly at r's start moves r.
 */
export function shiftRange(r: Range, change: TextChange): Range | undefined {
	const c = change.range;
	if (comparePositions(r.end, c.start) <= 0) {
		return r; // wholly before
	}
	if (comparePositions(r.start, c.end) >= 0) {
		return { start: shiftPosition(r.start, change), end: shiftPosition(r.end, change) };
	}
	if (comparePositions(r.start, c.start) <= 0 && comparePositions(c.end, r.end) <= 0) {
		return { start: r.start, end: shiftPosition(r.end, change) }; // the edit is inside r
	}
	return undefined;
}

/** shiftRanges applies shiftRange to every range, dropping those an edit cut into. */
export function shiftRanges(ranges: readonly Range[], change: TextChange): Range[] {
	const out: Range[] = [];
	for (const r of ranges) {
		const s = shiftRange(r, change);
		if (s) {
			out.push(s);
		}
	}
	return out;
}

/**
 * applyChanges applies the changes of one document change event in order (as LSP
 * and VS Code do: each change is relative to the text after the previous one).
 */
export function applyChanges(ranges: readonly Range[], changes: readonly TextChange[]): Range[] {
	let out = ranges.slice();
	for (const c of changes) {
		out = shiftRanges(out, c);
	}
	return out;
}
