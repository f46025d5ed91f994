// The real Hermes 0.19.0 the window tests run (scripts/hermes-setup.sh installs it under
// .cache), and the HERMES_HOME those tests give it: its model is the scripted provider,
// approvals are asked for (manual), and everything that would call the model on its own
// or look for updates is off, so a test's turns are the only requests.
import fs from 'node:fs';
import path from 'node:path';

/** The Python of the Hermes 0.19.0 that scripts/hermes-setup.sh installs. */
export const HERMES_PYTHON = path.resolve(process.cwd(), '../.cache/hermes-0.19.0/bin/python');

/** Writes config.yaml and .update_check into dir (a HERMES_HOME) and returns dir. */
export function writeHermesHome(dir: string): string {
  const conf = {
    model: { provider: 'custom', base_url: process.env.TALARIA_PROVIDER_URL, default: 'scripted-model', context_length: 131072 },
    approvals: { mode: 'manual', timeout: 300 },
    auxiliary: { title_generation: { enabled: false } },
    security: { tirith_enabled: false },
    memory: { memory_enabled: false, user_profile_enabled: false, nudge_interval: 0 },
    curator: { enabled: false },
    skills: { creation_nudge_interval: 0 },
  };
  fs.writeFileSync(path.join(dir, 'config.yaml'), JSON.stringify(conf)); // JSON is YAML
  fs.writeFileSync(path.join(dir, '.update_check'), JSON.stringify({ ts: Math.floor(Date.now() / 1000), behind: 0, rev: null, ver: '0.19.0' }));
  return dir;
}
