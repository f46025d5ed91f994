// `make notices` only: builds the bundle once more into a throwaway folder and lets
// rollup-plugin-license list every npm package whose code ended up in it (Svelte's
// runtime included, devDependencies that are not bundled left out), with its licence
// and licence text, as JSON for scripts/notices. The app's own build does not use it.
import { defineConfig, mergeConfig } from 'vite';
import license from 'rollup-plugin-license';
import base from './vite.config';

const out = process.env.TALARIA_NOTICES_OUT;
if (!out) throw new Error('set TALARIA_NOTICES_OUT to the folder for the build and npm.json');

export default mergeConfig(
  base,
  defineConfig({
    plugins: [],
    build: {
      outDir: `${out}/dist`,
      emptyOutDir: true,
      rollupOptions: {
        plugins: [
          license({
            thirdParty: {
              includePrivate: false,
              output: {
                file: `${out}/npm.json`,
                template(deps) {
                  const list = deps.map((d) => ({
                    name: d.name ?? '',
                    version: d.version ?? '',
                    license: d.license ?? '',
                    text: d.licenseText ?? '',
                  }));
                  return JSON.stringify(list, null, 1);
                },
              },
            },
          }),
        ],
      },
    },
  }),
);
