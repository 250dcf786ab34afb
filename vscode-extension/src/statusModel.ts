// Aggregating fuzzls/status into what the status bar and the Fuzzing view show.
// No VS Code dependency.

import { EngineGoTest, EngineLibFuzzer, StateBuilding, StateError, StateFuzzing, type Blocker, type MutatorStatus, type SessionStatus, type StatusParams } from './protocol';

export interface Summary {
	/** Sessions building or fuzzing. */
	running: number;
	/** Sum of execs/s over fuzzing sessions. */
	execsPerSec: number;
	/** Crashes over all sessions. */
	crashes: number;
	/** Sessions in the error state. */
	errors: number;
	sessions: number;
	/** Fuzzing sessions whose coverage has not grown for quietAfter seconds or more. */
	quiet: number;
	/** The fuzzing session without new coverage for the shortest time, when all of them are quiet. */
	quietest?: SessionStatus;
}

/** quietAfter is how long without new coverage (seconds of fuzzing) the status says so. */
export const quietAfter = 60;

function isQuiet(x: SessionStatus): boolean {
	return (x.sinceCoverage ?? 0) >= quietAfter;
}

export function summarize(params: StatusParams | undefined): Summary {
	const s: Summary = { running: 0, execsPerSec: 0, crashes: 0, errors: 0, sessions: 0, quiet: 0 };
	let fuzzing = 0;
	let quietest: SessionStatus | undefined;
	for (const x of params?.sessions ?? []) {
		s.sessions++;
		if (x.state === StateFuzzing || x.state === StateBuilding) {
			s.running++;
		}
		if (x.state === StateFuzzing) {
			s.execsPerSec += x.execsPerSec;
			fuzzing++;
			if (isQuiet(x)) {
				s.quiet++;
				if (!quietest || (x.sinceCoverage ?? 0) < (quietest.sinceCoverage ?? 0)) {
					quietest = x;
				}
			}
		}
		if (x.state === StateError) {
			s.errors++;
		}
		s.crashes += x.crashes;
	}
	if (fuzzing > 0 && s.quiet === fuzzing) {
		s.quietest = quietest;
	}
	return s;
}

/** formatDuration writes 45 s, 5 min, 2 h 5 min (rounded down to what it shows). */
export function formatDuration(seconds: number): string {
	const sec = Math.max(0, Math.floor(seconds));
	if (sec < 60) {
		return `${sec} s`;
	}
	const min = Math.floor(sec / 60);
	if (min < 60) {
		return `${min} min`;
	}
	const h = Math.floor(min / 60);
	return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
}

/**
 * quietText says how long a session has fuzzed without new coverage and how
 * many executions that has been ("no new coverage for 5 min, 1.2M execs"), once
 * that is quietAfter seconds; undefined before.
 */
export function quietText(x: SessionStatus): string | undefined {
	if (!isQuiet(x)) {
		return undefined;
	}
	return `no new coverage for ${formatDuration(x.sinceCoverage ?? 0)}, ${formatRate(x.execsSinceCoverage ?? 0)} execs`;
}

/**
 * blockerText is a blocker as the Fuzzing view lists it: the comparison as the
 * label, what fuzzing fed it and the code behind it as the description.
 */
export function blockerText(b: Blocker): { label: string; description: string } {
	const fed = b.frequent === b.nearest ? `nearest ${b.nearest}` : `nearest ${b.nearest}, most frequent ${b.frequent}`;
	return { label: b.expr, description: `${fed} · ${b.behind} block${b.behind === 1 ? '' : 's'} behind` };
}

/**
 * hookName is a mutator's or generator's function without its package path, as
 * the runtime names it: example.com/expr.exprMutator → exprMutator,
 * example.com/expr.FuzzExpr.func1 → FuzzExpr.func1 (dots within the path's last
 * element are escaped, %2e, so the first dot after the last slash ends it).
 */
export function hookName(name: string): string {
	const last = name.slice(name.lastIndexOf('/') + 1);
	const dot = last.indexOf('.');
	return dot >= 0 && dot < last.length - 1 ? last.slice(dot + 1) : name;
}

/** findsPercent writes the share of a hook's executions that found new coverage: 0.3 %, < 0.1 %, 0 %. */
function findsPercent(finds: number, execs: number): string {
	const pct = (100 * finds) / execs;
	if (finds > 0 && pct < 0.05) {
		return '< 0.1 %';
	}
	return `${pct.toFixed(1).replace(/\.0$/, '')} %`;
}

/**
 * mutatorText is one of a target's own mutators or generators as the Fuzzing
 * view lists it: kind and short name as the label; executions, finds (with their
 * share) and panics as the description; the full name and the problem (its first
 * panic with the stack, or why the target cannot use it) as the tooltip; a
 * warning icon when it has a problem.
 */
export function mutatorText(m: MutatorStatus): Row {
	const parts = [`${m.execs.toLocaleString('en-US')} execs`, `${m.finds.toLocaleString('en-US')} find${m.finds === 1 ? '' : 's'}${m.execs > 0 ? ` (${findsPercent(m.finds, m.execs)})` : ''}`];
	if (m.panics > 0) {
		parts.push(`${m.panics.toLocaleString('en-US')} panic${m.panics === 1 ? '' : 's'}`);
	}
	return {
		label: `${m.kind} ${hookName(m.name)}`,
		description: parts.join(', '),
		tooltip: m.problem ? `${m.kind} ${m.name}\n\n${m.problem}` : `${m.kind} ${m.name}`,
		icon: m.problem ? 'warning' : m.kind === 'generator' ? 'symbol-constructor' : 'wand',
	};
}

/** Row is a line of the Fuzzing view under a target. */
export interface Row {
	label: string;
	description: string;
	icon: string;
	tooltip?: string;
}

/**
 * targetRows are the rows the Fuzzing view shows under a target after its
 * crashes and blockers: corpus, coverage, plateau (once quiet), executions, and
 * one row per mutator or generator of the target's own.
 */
export function targetRows(s: SessionStatus): Row[] {
	const pct = s.blocks > 0 ? ` (${Math.round((100 * s.covered) / s.blocks)}%)` : '';
	const quiet = quietText(s);
	return [
		{ label: 'corpus', description: `${s.corpus} entries`, icon: 'database' },
		{ label: 'coverage', description: `${s.covered}/${s.blocks} blocks${pct}`, icon: 'symbol-ruler' },
		...(quiet ? [{ label: 'plateau', description: quiet, icon: 'watch' }] : []),
		// Why it stopped (its plateau) or cannot fuzz (a build error).
		...(s.state !== StateFuzzing && s.message ? [{ label: s.state, description: s.message, icon: 'info' }] : []),
		{ label: 'executions', description: `${s.execs.toLocaleString('en-US')} · ${formatRate(s.execsPerSec)}/s`, icon: 'dashboard' },
		...(s.mutators ?? []).map(mutatorText),
	];
}

/**
 * mutatorLine is a mutator or generator in a line (the status bar's tooltip):
 * the view's label and description, and the first line of its problem.
 */
export function mutatorLine(m: MutatorStatus): string {
	const t = mutatorText(m);
	const problem = m.problem ? ` — ${m.problem.split('\n')[0]}` : '';
	return `${t.label}: ${t.description}${problem}`;
}

/** formatRate writes 950, 12.3k, 1.2M. */
export function formatRate(n: number): string {
	if (n < 1000) {
		return String(Math.round(n));
	}
	if (n < 1e6) {
		return `${(n / 1e3).toFixed(n < 1e4 ? 2 : 1).replace(/\.?0+$/, '')}k`;
	}
	return `${(n / 1e6).toFixed(1).replace(/\.0$/, '')}M`;
}

function plural(n: number, word: string): string {
	return `${n} ${word}${n === 1 ? '' : 'es'}`;
}

/** statusText is the status bar item's text (with a codicon). */
export function statusText(s: Summary): string {
	if (s.sessions === 0 || (s.running === 0 && s.crashes === 0 && s.errors === 0)) {
		return '$(beaker) fuzzls';
	}
	const parts: string[] = [];
	if (s.running > 0) {
		parts.push(`${s.running} running`, `${formatRate(s.execsPerSec)} execs/s`);
	}
	if (s.crashes > 0) {
		parts.push(plural(s.crashes, 'crash'));
	}
	if (s.errors > 0) {
		parts.push(`${s.errors} failed`);
	}
	if (s.quietest && s.quiet === 1) {
		parts.push(quietText(s.quietest) ?? '');
	} else if (s.quietest) {
		parts.push(`no new coverage for ${formatDuration(s.quietest.sinceCoverage ?? 0)}`);
	} else if (s.quiet > 0) {
		parts.push(`${s.quiet} without new coverage`);
	}
	const icon = s.crashes > 0 ? '$(bug)' : s.running > 0 ? '$(sync~spin)' : '$(beaker)';
	return `${icon} fuzzls: ${parts.join(' · ')}`;
}

/** engineLabel names the engine fuzzing a session when it is not fuzzls's own: "go test", "libFuzzer", else "". */
export function engineLabel(x: SessionStatus): string {
	switch (x.engine) {
		case EngineGoTest:
			return 'go test';
		case EngineLibFuzzer:
			return 'libFuzzer';
	}
	return '';
}

/** sessionLine describes one session in a line (tooltips, the view, test output). */
export function sessionLine(x: SessionStatus): string {
	const engine = engineLabel(x);
	const parts = [`${x.name}${engine ? ` (${engine})` : ''}: ${x.state}`];
	if (x.state === StateFuzzing) {
		parts.push(`${formatRate(x.execsPerSec)} execs/s`);
	}
	if (x.blocks > 0) {
		parts.push(`${x.covered}/${x.blocks} blocks`);
	}
	if (x.changed) {
		parts.push(`changed: ${x.changedReached ?? 0}/${x.changed} blocks reached`);
	}
	parts.push(`corpus ${x.corpus}`);
	if (x.crashes > 0) {
		parts.push(plural(x.crashes, 'crash'));
	}
	const quiet = x.state === StateFuzzing ? quietText(x) : undefined;
	if (quiet) {
		parts.push(quiet);
	}
	if (x.message) {
		parts.push(x.message);
	}
	return parts.join(' · ');
}

/** Packages groups sessions by package, both sorted by name (the Fuzzing view's tree). */
export function byPackage(params: StatusParams | undefined): Map<string, SessionStatus[]> {
	const m = new Map<string, SessionStatus[]>();
	const sorted = [...(params?.sessions ?? [])].sort(
		(a, b) => a.package.localeCompare(b.package) || a.name.localeCompare(b.name),
	);
	for (const x of sorted) {
		const list = m.get(x.package) ?? [];
		list.push(x);
		m.set(x.package, list);
	}
	return m;
}
