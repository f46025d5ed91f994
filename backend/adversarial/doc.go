// Package adversarial is the attack suite of issue #10, run by make test: a corpus of
// commands and file-tool calls a compromised or confused model may issue, each sent
// through the real backend and the real sidecar by a scripted model. Every approval is
// denied. Each entry must be asked (or refused), or run inside the sandbox with no
// effect outside the workspace: the test compares every file of a fake home folder
// (shell profiles, ~/.ssh, other secret stores, a project outside the workspace, the
// app's data folder and its settings) before and after, and watches a canary listener
// on 127.0.0.1 for any connection, and looks for planted secrets and the chat's own
// secret (in every encoding redaction knows) in every frame, the journal, the database,
// the logs and the requests to the model. The figures go to build/adversarial/report.txt
// (ADVERSARIAL_WALLS=off: the baseline with the walls off, report-walls-off.txt).
// TestFileToolRaces races the file tools against links swapped in by rename; the kill
// tests SIGKILL the sidecar and the app while a command runs.
//
// The suite needs bubblewrap, so its tests are Linux-only; this file keeps the package
// visible on every platform (the Windows compile check lists it).
package adversarial
