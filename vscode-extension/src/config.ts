// Reading the fuzzls.* settings. No VS Code dependency: the caller passes a getter
// (vscode.WorkspaceConfiguration.get bound to the "fuzzls" section).

import * as os from 'node:os';
import { AutoStartOff, AutoStartOpenFiles, AutoStartWorkspace, EngineFuzzls, EngineGoTest, EngineLibFuzzer, defaultSettings, type Settings } from './protocol';

/** A getter of one setting of the fuzzls section, as WorkspaceConfiguration.get. */
export type Getter = <T>(key: string, defaultValue: T) => T;

/**
 * DaemonSettings are the settings the daemon uses, defined once in
 * protocol/protocol.go (Settings, with their defaults in DefaultSettings) and
 * generated into protocol.ts. The extension sends them as
 * `initializationOptions` and, on a change, as
 * `workspace/didChangeConfiguration` `{settings: {fuzzls: DaemonSettings}}`.
 */
export type DaemonSettings = Settings;

/** The section of the settings, and the key under which didChangeConfiguration sends them. */
export const section = 'fuzzls';

/** Settings whose change needs the daemon restarted rather than told. */
export const restartSettings = ['path'];

const autoStarts: readonly string[] = [AutoStartOff, AutoStartOpenFiles, AutoStartWorkspace];
const engines: readonly string[] = [EngineFuzzls, EngineGoTest, EngineLibFuzzer];

function int(v: unknown, def: number): number {
	return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : def;
}

function bool(v: unknown, def: boolean): boolean {
	return typeof v === 'boolean' ? v : def;
}

/** niceValue keeps a nice value from 0 to 19, else the default. */
function niceValue(n: number): number {
	return n <= 19 ? n : defaultSettings.nice;
}

/** daemonSettings reads the settings the daemon needs, falling back to the defaults on nonsense. */
export function daemonSettings(get: Getter): DaemonSettings {
	const d = defaultSettings;
	const autoStart = get<string>('autoStart', d.autoStart);
	const timeout = get<string>('timeout', d.timeout);
	const cacheDir = get<string>('cacheDir', d.cacheDir);
	const syncDir = get<string>('syncDir', d.syncDir);
	const plateau = get<string>('plateau', d.plateau);
	const buildFlags = get<unknown>('buildFlags', d.buildFlags);
	const engine = get<string>('engine', d.engine);
	return {
		autoStart: autoStarts.includes(autoStart) ? autoStart : d.autoStart,
		parallel: int(get<number>('parallel', d.parallel), d.parallel),
		keepFuzzing: bool(get<boolean>('keepFuzzing', d.keepFuzzing), d.keepFuzzing),
		leaks: bool(get<boolean>('leaks', d.leaks), d.leaks),
		blockers: bool(get<boolean>('blockers', d.blockers), d.blockers),
		timeout: typeof timeout === 'string' ? timeout.trim() : d.timeout,
		plateau: typeof plateau === 'string' ? plateau.trim() : d.plateau,
		rssLimitMB: int(get<number>('rssLimitMB', d.rssLimitMB), d.rssLimitMB),
		nice: niceValue(int(get<number>('nice', d.nice), d.nice)),
		cacheDir: typeof cacheDir === 'string' ? expandHome(cacheDir.trim()) : d.cacheDir,
		syncDir: typeof syncDir === 'string' ? expandHome(syncDir.trim()) : d.syncDir,
		buildFlags: Array.isArray(buildFlags) ? buildFlags.filter((f): f is string => typeof f === 'string' && f.trim() !== '').map((f) => f.trim()) : [],
		engine: engines.includes(engine) ? engine : d.engine,
	};
}

/** didChangeConfigurationSettings is the `settings` member of didChangeConfiguration. */
export function didChangeConfigurationSettings(s: DaemonSettings): { [section]: DaemonSettings } {
	return { [section]: s };
}

export type DecoratorType = 'highlight' | 'gutter' | 'both';

export interface CoverageDecorator {
	type: DecoratorType;
	coveredHighlightColor: string;
	uncoveredHighlightColor: string;
	showCovered: boolean;
	showUncovered: boolean;
}

export const defaultDecorator: CoverageDecorator = {
	type: 'highlight',
	coveredHighlightColor: 'rgba(64,128,128,0.3)',
	uncoveredHighlightColor: 'rgba(128,64,64,0.3)',
	showCovered: true,
	showUncovered: true,
};

/** coverageDecorator reads fuzzls.coverageDecorator; a string is taken as the type. */
export function coverageDecorator(get: Getter): CoverageDecorator {
	const raw = get<unknown>('coverageDecorator', defaultDecorator);
	const d: CoverageDecorator = { ...defaultDecorator };
	const o: Record<string, unknown> = typeof raw === 'string' ? { type: raw } : raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
	if (o.type === 'highlight' || o.type === 'gutter' || o.type === 'both') {
		d.type = o.type;
	}
	if (typeof o.coveredHighlightColor === 'string' && o.coveredHighlightColor) {
		d.coveredHighlightColor = o.coveredHighlightColor;
	}
	if (typeof o.uncoveredHighlightColor === 'string' && o.uncoveredHighlightColor) {
		d.uncoveredHighlightColor = o.uncoveredHighlightColor;
	}
	if (typeof o.showCovered === 'boolean') {
		d.showCovered = o.showCovered;
	}
	if (typeof o.showUncovered === 'boolean') {
		d.showUncovered = o.showUncovered;
	}
	return d;
}

/**
 * expandHome reads a leading ~ as the home folder (os.homedir(): $HOME, or on
 * Windows, which has no HOME, %USERPROFILE%), before / or \\.
 */
export function expandHome(p: string, home: string = os.homedir()): string {
	if (home && (p === '~' || p.startsWith('~/') || p.startsWith('~\\'))) {
		return home + p.slice(1);
	}
	return p;
}
