// Time series of each session's progress, sampled from fuzzls/status, for the chart.
// No VS Code dependency.

import type { StatusParams } from './protocol';
import { targetKey } from './coverageModel';

export interface Sample {
	/** Milliseconds since the epoch. */
	t: number;
	execsPerSec: number;
	covered: number;
	blocks: number;
	execs: number;
	crashes: number;
}

export class History {
	private readonly series = new Map<string, Sample[]>();

	/** @param max samples kept per target (the oldest go first). */
	constructor(private readonly max = 3600) {}

	/** add records one status notification received at time now. */
	add(params: StatusParams, now: number): void {
		for (const s of params.sessions ?? []) {
			const key = targetKey(s);
			const list = this.series.get(key) ?? [];
			const last = list[list.length - 1];
			// A stopped session repeats its last numbers: record it once.
			if (last && s.execsPerSec === 0 && last.execsPerSec === 0 && last.covered === s.covered && last.execs === s.execs) {
				continue;
			}
			list.push({ t: now, execsPerSec: s.execsPerSec, covered: s.covered, blocks: s.blocks, execs: s.execs, crashes: s.crashes });
			if (list.length > this.max) {
				list.splice(0, list.length - this.max);
			}
			this.series.set(key, list);
		}
	}

	get(key: string): readonly Sample[] {
		return this.series.get(key) ?? [];
	}
}
