// ESLint for the extension's TypeScript: the recommended rules of ESLint and of
// typescript-eslint, with type information (the promise rules need it).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
	{ ignores: ['dist/', 'out/', 'bin/', 'build/', 'node_modules/', 'test/e2e/'] },
	js.configs.recommended,
	...tseslint.configs.recommendedTypeChecked,
	{
		languageOptions: {
			parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
		},
	},
	{
		// node:test's describe and it return promises the runner itself awaits.
		files: ['test/unit/**/*.ts'],
		rules: { '@typescript-eslint/no-floating-promises': 'off' },
	},
);
