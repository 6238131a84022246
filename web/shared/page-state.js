// What the page has finished, for the programs that drive it (tests/e2e, scripts/measure): one
// data-* attribute on <body> per fact, written only here and read by nothing in the page, so a
// driver waits on a fact instead of a timer. The facts, by view:
//   walkthrough  ready (its first draw)
//   model        modelReady (the session started, the first model's load ended), modelLoading,
//                modelSource / modelName (the loaded model), modelLoads (checkpoints loaded),
//                modelRun (the typed text's last drawn run), modelGenerated (the last generation
//                drawn), modelAblated (heads knocked out in the drawn run), modelCache (times the
//                kept files were listed), modelHubListed (the id box's repo's file lists ended:
//                listed, refused or cancelled), modelThreads, trainingRun (the "Across training" strip's
//                run: running, done, cancelled, failed) and trainingDone (its checkpoints drawn)
//   train        trainReady, trainStatus, trainStep
//   circuits     circuitsMounted, circuitsReads (the prompts and answers read), circuitsRunning, circuitsShown
//                (the analysis drawn last), circuitsDrawn (analyses drawn), circuitsError (the analysis refused),
//                circuitsHead (the head whose pattern is shown, 'layer.head'), circuitsPresets (the model whose
//                presets were checked, 'source:name')
// Elements a role or a label identifies are found by those, never by a fact here.

/** Sets facts: { name: value } (values as text). */
export function setPageState(facts) {
  for (const [name, value] of Object.entries(facts)) document.body.dataset[name] = String(value);
}

/** Counts one more of `name` (a fact that tells a driver "once more"). */
export function countPageState(name) {
  setPageState({ [name]: Number(document.body.dataset[name] ?? 0) + 1 });
}
