// The Train view's run configuration: from the page's settings (shared/state.js) to the worker's
// config, each task's example probe, and the checkpoint's file name. No math here.

// A probe each task's vocabulary can encode, showing what the task is about.
export const EXAMPLE_PROBES = Object.freeze({
  induction: 'QwErTyUiOpQwErTyUiOp',
  copy: 'attention|attention.',
  reverse: 'attention|noitnetta.',
  sort: 'attention|aeinnottt.',
  english: 'the cat sat on the mat. the cat sat on the mat.',
});

/** The settings that make a run: changing one starts a fresh model. */
export const RUN_KEYS = Object.freeze(['task', 'layers', 'trainHeads', 'trainDModel', 'context', 'lr', 'batch', 'trainSeed']);

/** The probe the view shows for `settings` (the task's example when the field is empty). */
export const probeOf = (settings) => settings.probe || EXAMPLE_PROBES[settings.task] || EXAMPLE_PROBES.induction;

/** The worker's configure message for `settings`. */
export const runConfig = (settings) => ({
  task: settings.task,
  layers: settings.layers,
  heads: Number(settings.trainHeads),
  dModel: Number(settings.trainDModel),
  context: settings.context,
  lr: settings.lr,
  batch: settings.batch,
  seed: settings.trainSeed,
  probe: probeOf(settings),
});

/** True when the run settings differ (the model must start again). */
export const runChanged = (now, before) => RUN_KEYS.some((key) => now[key] !== before[key]);

/** "attention-lens-induction-2x4-d64-ctx64-lr0.001-b32-seed1-step250.safetensors" */
export const checkpointName = (config, step) => `attention-lens-${config.task}-${config.layers}x${config.heads}-d${config.dModel}` +
  `-ctx${config.context}-lr${config.lr}-b${config.batch}-seed${config.seed}-step${step}.safetensors`;
