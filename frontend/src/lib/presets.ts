// Provider presets of the Settings dialog. `id` is what SaveSettings stores as
// provider_name; base URLs are the endpoints' usual OpenAI-compatible roots.

export interface ProviderPreset {
  id: string;
  label: string;
  baseUrl: string;
  needsKey: boolean;
  local: boolean;
}

export const PROVIDER_PRESETS: readonly ProviderPreset[] = [
  { id: 'ollama', label: 'Ollama', baseUrl: 'http://127.0.0.1:11434/v1', needsKey: false, local: true },
  { id: 'llamacpp', label: 'llama.cpp', baseUrl: 'http://127.0.0.1:8080/v1', needsKey: false, local: true },
  { id: 'lmstudio', label: 'LM Studio', baseUrl: 'http://127.0.0.1:1234/v1', needsKey: false, local: true },
  { id: 'openai', label: 'OpenAI', baseUrl: 'https://api.openai.com/v1', needsKey: true, local: false },
  { id: 'openrouter', label: 'OpenRouter', baseUrl: 'https://openrouter.ai/api/v1', needsKey: true, local: false },
  { id: 'custom', label: 'Custom', baseUrl: '', needsKey: false, local: false },
];

/** The preset a stored provider_name/base_url pair belongs to (Custom when none fits). */
export function presetFor(providerName: string, baseUrl: string): ProviderPreset {
  const byName = PROVIDER_PRESETS.find((p) => p.id === providerName);
  if (byName) return byName;
  const byUrl = PROVIDER_PRESETS.find((p) => p.baseUrl && p.baseUrl === baseUrl.replace(/\/+$/, ''));
  return byUrl ?? PROVIDER_PRESETS[PROVIDER_PRESETS.length - 1];
}
