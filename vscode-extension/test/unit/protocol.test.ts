// protocol.ts must be what `go run ./protocol/gen` makes of protocol/protocol.go
// (the Go test in protocol/gen checks the same; this one runs with npm test).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { it } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..', '..');

it('src/protocol.ts is generated from protocol/protocol.go', (t) => {
	const which = spawnSync('go', ['version']);
	if (which.error) {
		t.skip('no go on PATH');
		return;
	}
	const r = spawnSync('go', ['run', './protocol/gen', '-check'], { cwd: root, encoding: 'utf8' });
	assert.equal(r.status, 0, r.stderr);
});
