// Package lifecycle starts and stops cuasd's long-running parts in one
// order and reports how each of them is doing.
//
// A Group holds Components in start order: bus, ledger, fusion, the gate,
// outputs, inputs, HTTP. Run starts them one by one; if one fails to
// start, those already started are stopped in reverse order and Run
// returns the error. Once all are running, Run waits for its context to end
// (or for a component to fail), then stops every component in exactly the
// reverse order. There is one shutdown path for every case.
//
// Status is the registry of component states (starting, up, retrying or
// restarting with the last error, stopped) behind the /readyz detail and
// the cuasd_component_up{component} and
// cuasd_component_restarts_total{component} series. Components report
// through a Reporter; Retry is the one supervisor of every long-running
// loop: it restarts a loop that ended, with back-off, reporting as it goes.
package lifecycle
