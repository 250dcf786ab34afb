// The coverage the daemon last reported, per target and file, kept in step with
// the user's edits. No VS Code dependency: coverage.ts draws it and testing.ts
// feeds it to the Testing API.

import type { CoverageParams, Range, TargetID } from './protocol';
import { applyChanges, comparePositions, type TextChange } from './rangeShift';

export interface FileRanges {
	covered: Range[];
	uncovered: Range[];
	/** Blocks the last save changed that no input reached yet (not in uncovered). */
	uncoveredChanged: Range[];
}

export function targetKey(t: TargetID): string {
	return `${t.package}.${t.name}`;
}

function rangeKey(r: Range): string {
	return `${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}`;
}

function sortRanges(rs: Range[]): Range[] {
	return rs.sort((a, b) => comparePositions(a.start, b.start) || comparePositions(a.end, b.end));
}

export class CoverageModel {
	// target key → file URI (normalized) → ranges.
	private readonly byTarget = new Map<string, { target: TargetID; files: Map<string, FileRanges> }>();

	/** @param normalize maps a URI from the daemon to the form documents use. */
	constructor(private readonly normalize: (uri: string) => string = (u) => u) {}

	/**
	 * update replaces what is known of params.target by params (the daemon sends every
	 * instrumented file of the target's package each time). It returns the URIs whose
	 * ranges may have changed.
	 */
	update(params: CoverageParams): Set<string> {
		const key = targetKey(params.target);
		const touched = new Set<string>(this.byTarget.get(key)?.files.keys() ?? []);
		const files = new Map<string, FileRanges>();
		for (const f of params.files ?? []) {
			const uri = this.normalize(f.uri);
			files.set(uri, {
				covered: (f.covered ?? []).slice(),
				uncovered: (f.uncovered ?? []).slice(),
				uncoveredChanged: (f.uncoveredChanged ?? []).slice(),
			});
			touched.add(uri);
		}
		this.byTarget.set(key, { target: params.target, files });
		return touched;
	}

	/** edit moves the ranges of uri with the document's content changes. */
	edit(uri: string, changes: readonly TextChange[]): boolean {
		let any = false;
		for (const { files } of this.byTarget.values()) {
			const fr = files.get(uri);
			if (!fr || (fr.covered.length === 0 && fr.uncovered.length === 0 && fr.uncoveredChanged.length === 0)) {
				continue;
			}
			fr.covered = applyChanges(fr.covered, changes);
			fr.uncovered = applyChanges(fr.uncovered, changes);
			fr.uncoveredChanged = applyChanges(fr.uncoveredChanged, changes);
			any = true;
		}
		return any;
	}

	/**
	 * forFile merges the targets that instrument uri: a block reached by any target
	 * is covered; one no target reached is uncovered, and uncoveredChanged if a
	 * target's build counts it as changed by the last save.
	 */
	forFile(uri: string): FileRanges {
		const covered = new Map<string, Range>();
		const uncovered = new Map<string, Range>();
		const changed = new Map<string, Range>();
		for (const { files } of this.byTarget.values()) {
			const fr = files.get(uri);
			if (!fr) {
				continue;
			}
			for (const r of fr.covered) {
				covered.set(rangeKey(r), r);
			}
			for (const r of fr.uncovered) {
				uncovered.set(rangeKey(r), r);
			}
			for (const r of fr.uncoveredChanged) {
				changed.set(rangeKey(r), r);
			}
		}
		for (const k of covered.keys()) {
			uncovered.delete(k);
			changed.delete(k);
		}
		for (const k of changed.keys()) {
			uncovered.delete(k);
		}
		return {
			covered: sortRanges([...covered.values()]),
			uncovered: sortRanges([...uncovered.values()]),
			uncoveredChanged: sortRanges([...changed.values()]),
		};
	}

	/** files returns the coverage of one target, by file URI. */
	files(target: TargetID): ReadonlyMap<string, FileRanges> {
		return this.byTarget.get(targetKey(target))?.files ?? new Map();
	}

	targets(): TargetID[] {
		return [...this.byTarget.values()].map((v) => v.target);
	}

	/** uris returns every file with coverage. */
	uris(): Set<string> {
		const out = new Set<string>();
		for (const { files } of this.byTarget.values()) {
			for (const u of files.keys()) {
				out.add(u);
			}
		}
		return out;
	}

	clear(): Set<string> {
		const u = this.uris();
		this.byTarget.clear();
		return u;
	}
}
