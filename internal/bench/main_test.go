package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

const sampleOut = `goos: linux
goarch: amd64
pkg: github.com/mcplrefs/refcore/fetch
BenchmarkFetch/64MiB-2   	      16	  40000000 ns/op	1677.72 MB/s	   40324 B/op	     134 allocs/op
BenchmarkSHA256/cached-2 	      32	  35000000 ns/op	1917.39 MB/s	     160 B/op	       2 allocs/op
BenchmarkHeapPerRecord-2 	       1	7276643464 ns/op	       391.4 heap-B/record
PASS
`

func TestParseBench(t *testing.T) {
	v := values{}
	parseBench([]byte(sampleOut), v)
	for _, c := range []struct {
		name, unit string
		want       float64
	}{
		{"Fetch/64MiB", "sec/op", 0.04},
		{"Fetch/64MiB", "B/s", 1677.72e6},
		{"Fetch/64MiB", "B/op", 40324},
		{"SHA256/cached", "allocs/op", 2},
		{"HeapPerRecord", "heap-B/record", 391.4},
	} {
		if got, ok := v.get(c.name, c.unit); !ok || got != c.want {
			t.Errorf("%s %s = %v, %v; want %v", c.name, c.unit, got, ok, c.want)
		}
	}
}

// benchstat's CSV, as it prints it: configuration lines before the first
// section, one section per unit.
const sampleCSV = `goos: linux
goarch: amd64
pkg: github.com/mcplrefs/refcore/label
,/tmp/x.txt,
,sec/op,CI
Clean/short-2,4.763e-09,∞
Peer/short,9.700000000000001e-08,∞
geomean,2.1494441141839418e-08,

,/tmp/x.txt,
,B/s,CI
Clean/short-2,2.93922e+09,∞
Peer/short,1.43e+08,∞
geomean,6.483120082182671e+08,

,/tmp/x.txt,
,allocs/op,CI
Clean/short-2,0,∞
geomean,,
`

func TestParseCSV(t *testing.T) {
	v := values{}
	if err := parseCSV(sampleCSV, v); err != nil {
		t.Fatal(err)
	}
	if got, _ := v.get("Peer/short", "sec/op"); got != 9.700000000000001e-08 {
		t.Errorf("Peer/short sec/op = %v", got)
	}
	if got, ok := v.get("Clean/short", "allocs/op"); !ok || got != 0 {
		t.Errorf("Clean/short allocs/op = %v, %v; want 0, true", got, ok)
	}
	if _, ok := v.get("geomean", "B/s"); ok {
		t.Error("the geomean row was read as a benchmark")
	}
}

func TestReport(t *testing.T) {
	med := values{}
	med.set("Clean/mixed", "B/s", 1000)
	med.set("Peer/mixed", "B/s", 300)
	med.set("Clean/ascii1m", "B/s", 850)
	med.set("Peer/ascii1m", "B/s", 300)
	med.set("Clean/short", "sec/op", 5e-9)
	med.set("Peer/short", "sec/op", 100e-9)
	med.set("Clean/short", "allocs/op", 0)
	round := values{}
	round.set("Clean/mixed", "B/s", 1000)
	round.set("Peer/mixed", "B/s", 250)
	r := &result{medians: med, rounds: []values{round, med}, others: 0.5}
	var out bytes.Buffer
	err := report(&out, nil, map[string]*result{"label": r})
	text := out.String()
	for _, want := range []string{
		"label mixed MB/s vs peer                 3.33         3.33-4.00              >= 3.50   PASS (busy machine: >= 3.00)",
		"label ascii1m MB/s vs peer               2.83         2.83-2.83              >= 3.50   FAIL",
		"label short ns/op vs peer                0.05         0.05-0.05              <= 0.10   PASS",
		"label clean input allocs/op              0",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if err == nil {
		t.Error("a failed target reported no error")
	}
}

// TestParseBenchTimeMetrics pins that a metric counted in nanoseconds per
// operation is read in seconds under benchstat's name for it, so a round's
// value and a median compare.
func TestParseBenchTimeMetrics(t *testing.T) {
	v := values{}
	parseBench([]byte("BenchmarkFetch/64MiB-2 \t 20 \t 60000000 ns/op\t 100000000 cpu-ns/op\t 5000000 ingest-ns/op\n"), v)
	for unit, want := range map[string]float64{"sec/op": 0.06, "cpu-sec/op": 0.1, "ingest-sec/op": 0.005} {
		if got, ok := v.get("Fetch/64MiB", unit); !ok || got != want {
			t.Errorf("Fetch/64MiB %s = %v, %v; want %v", unit, got, ok, want)
		}
	}
}

// TestReportCPUBounds pins the section under the targets that sets each
// speed target beside the best its measured side's CPU time allows on
// this machine's processors.
func TestReportCPUBounds(t *testing.T) {
	onCPUs(t, 2)
	fetch := values{}
	fetch.set("Fetch/64MiB", "B/s", 1100e6)
	fetch.set("Fetch/64MiB", "sec/op", 0.061)
	fetch.set("Fetch/64MiB", "cpu-sec/op", 0.1)
	fetch.set("SHA256/cached", "B/s", 1678e6)
	fetch.set("SHA256/cached", "sec/op", 0.04)
	flow := values{}
	flow.set("HostFlow/fetchers=1", "sec/op", 0.24)
	flow.set("HostFlow/fetchers=8", "sec/op", 0.16)
	flow.set("HostFlow/fetchers=8", "cpu-sec/op", 0.3)
	label := values{}
	label.set("Clean/mixed", "B/s", 1000)
	label.set("Peer/mixed", "B/s", 300)
	var out bytes.Buffer
	report(&out, nil, map[string]*result{
		"fetch":    {medians: fetch},
		"hostflow": {medians: flow},
		"label":    {medians: label},
	})
	text := out.String()
	_, section, ok := strings.Cut(text, "\nCPU time")
	if !ok {
		t.Fatalf("no CPU time section:\n%s", text)
	}
	for _, want := range []string{
		"fetch 64MiB vs hashing limit             0.66         0.80         100 ms",
		"host flow 8 fetchers vs 1 (speed)        1.50         1.60         300 ms",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("CPU time section lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(section, "label") {
		t.Errorf("a target whose side reports no CPU time has a bound:\n%s", text)
	}
}

// TestCPUBoundOnlyForSpeeds pins that only a target asking for a speed
// gets a bound: a ratio of times that is not inverted, or of speeds that
// is, measures slowness, which CPU time does not bound from above.
func TestCPUBoundOnlyForSpeeds(t *testing.T) {
	onCPUs(t, 2)
	med := values{}
	med.set("A", "cpu-sec/op", 0.1)
	med.set("B", "sec/op", 0.04)
	r := &result{medians: med}
	for _, c := range []struct {
		t    target
		want bool
	}{
		{target{num: "A", den: "B", unit: "B/s", op: ">="}, true},
		{target{num: "A", den: "B", unit: "sec/op", invert: true, op: ">="}, true},
		{target{num: "A", den: "B", unit: "sec/op", op: ">="}, false},
		{target{num: "A", den: "B", unit: "B/s", invert: true, op: ">="}, false},
		{target{num: "A", den: "B", unit: "sec/op", invert: true, op: "<="}, false},
		{target{num: "A", den: "B", unit: "B/op", op: ">="}, false},
		{target{num: "A", unit: "B/s", op: ">="}, false},
		{target{num: "B", den: "A", unit: "B/s", op: ">="}, false}, // B reports no CPU time
	} {
		bound, _, ok := c.t.cpuBound(r)
		if ok != c.want {
			t.Errorf("%+v: bound %v, %v; want a bound: %v", c.t, bound, ok, c.want)
		}
		if ok && math.Abs(bound-0.8) > 1e-9 {
			t.Errorf("%+v: bound %v, want 0.8 on %d CPUs", c.t, bound, cpus)
		}
	}
}

// onCPUs makes the bounds spread CPU time over n processors until t ends.
func onCPUs(t *testing.T, n int) {
	old := cpus
	cpus = n
	t.Cleanup(func() { cpus = old })
}
