// Finding fuzz targets in Go test files without the daemon, for the Test Explorer.
// No VS Code dependency.

export interface FoundTarget {
	name: string;
	/** Zero-based line of `func FuzzXxx`. */
	line: number;
}

// go test's rule: "Fuzz", then nothing or a rune that is not lower case.
const fuzzFunc = /^func\s+(Fuzz(?!\p{Ll})[\p{L}\p{N}_]*)\s*\(\s*[\p{L}_][\p{L}\p{N}_]*\s+\*\s*testing\.F\s*\)/u;

/** findFuzzTargets lists the `func FuzzXxx(f *testing.F)` declarations of a Go file. */
export function findFuzzTargets(text: string): FoundTarget[] {
	const out: FoundTarget[] = [];
	const lines = text.split(/\r?\n/);
	for (let i = 0; i < lines.length; i++) {
		const m = fuzzFunc.exec(lines[i]);
		if (m) {
			out.push({ name: m[1], line: i });
		}
	}
	return out;
}
