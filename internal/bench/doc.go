// Package main is the compare program for the performance targets of
// shared/bench/README.md. Run it from the module root:
//
//	go run ./internal/bench [-count 6] [-benchtime 1s] [-groups label,fetch,refs,convert,hostflow] [-peer ../shared/bench/label-peer.mjs] [-keep DIR]
//
// It builds each package's test binary once, then runs every benchmark
// and its baseline or peer interleaved: in each of -count rounds, each
// member of a group runs once, in an order that alternates from round to
// round, so a swing of the shared machine's load falls on both sides of a
// ratio. The label peer is node running label-peer.mjs; its lines are
// turned into benchmark lines. benchstat, fetched from the module proxy at
// a pinned version, summarizes each group (medians with confidence
// intervals), and the program prints one line per target: the ratio of
// the medians, the range of the ratios measured round by round, the
// target, and PASS or FAIL. It also prints how much of the machine other
// processes used while a group ran, since a busy machine is the first
// suspect when a ratio that depends on two cores fails.
//
// Under the targets it prints, for each speed target whose measured side
// reports its CPU time (cpu-ns/op), the best ratio that CPU time allows:
// no run finishes sooner than its CPU time spread over all the machine's
// processors. A bound below the target means the measured side must do
// less work to pass, not overlap its work better; a measured ratio far
// below its bound means processors sat idle.
//
// The exit status is 0 when every target passed, 1 when one failed or
// could not be measured, and 2 for a usage error.
package main
