package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// benchstatTool is benchstat at a pinned version, run from the module
// proxy; it is never a dependency of the module.
const benchstatTool = "golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

// A member is one command of a group: a package's benchmarks selected by
// a -test.bench pattern, or the node peer for labels.
type member struct {
	pkg       string // "./fetch"; empty for the node peer
	bench     string
	benchtime string // "" means the -benchtime flag
	rounds    int    // 0 means every round
}

// A group is benchmarks that are compared with each other, so they run
// interleaved.
type group struct {
	name    string
	members []member
}

var groups = []group{
	{"label", []member{
		{pkg: "./label", bench: "^BenchmarkClean$/^(short|mixed|ascii1m)$"},
		{}, // the node peer
	}},
	{"fetch", []member{
		{pkg: "./fetch", bench: "^BenchmarkFetch$/^64MiB$"},
		{pkg: "./fetch", bench: "^BenchmarkSHA256$/^cached$"},
		{pkg: "./fetch", bench: "^BenchmarkBaseline$/^64MiB$"},
		{pkg: "./fetch", bench: "^BenchmarkFetch$/^1MiB$"},
		{pkg: "./fetch", bench: "^BenchmarkFetch$/^64MiB-dirstore$"},
		{pkg: "./fetch", bench: "^BenchmarkFetchGzip$"},
		{pkg: "./fetch", bench: "^BenchmarkBaseline$/^gzip$"},
	}},
	{"refs", []member{
		// One process fills each registry once for the three; the
		// million-record fill takes seconds.
		{pkg: "./refs", bench: "^Benchmark(Register|Get|MapLookup)$/^(hit|2000|1000000)$"},
		{pkg: "./refs", bench: "^BenchmarkHeapPerRecord$", benchtime: "1x", rounds: 1},
	}},
	{"convert", []member{
		{pkg: "./convert", bench: "^BenchmarkRender$/^(100blocks|1MiBname|stub)$"},
		{pkg: "./convert", bench: "^BenchmarkRenderLinear$"},
	}},
	{"hostflow", []member{
		{pkg: "./fetch", bench: "^BenchmarkHostFlow$/^fetchers=1$", benchtime: "5x"},
		{pkg: "./fetch", bench: "^BenchmarkHostFlow$/^fetchers=8$", benchtime: "5x"},
	}},
}

// A target is one line of the bench README's table. Benchmark names are
// as benchstat prints them, without the -N suffix.
type target struct {
	group, what string
	num, den    string // den "" compares num's value itself with want
	unit        string // benchstat's unit: sec/op, B/s, B/op, allocs/op, or a metric's
	invert      bool   // the ratio is den/num
	spread      bool   // the ratio is the larger over the smaller
	op          string // ">=", "<=" or "=="
	want        float64
	busyWant    float64 // if set, the target while other processes use the machine
}

var targets = []target{
	{group: "label", what: "label mixed MB/s vs peer", num: "Clean/mixed", den: "Peer/mixed", unit: "B/s", op: ">=", want: 3.5, busyWant: 3},
	{group: "label", what: "label ascii1m MB/s vs peer", num: "Clean/ascii1m", den: "Peer/ascii1m", unit: "B/s", op: ">=", want: 3.5, busyWant: 3},
	{group: "label", what: "label short ns/op vs peer", num: "Clean/short", den: "Peer/short", unit: "sec/op", op: "<=", want: 0.1},
	{group: "label", what: "label clean input allocs/op", num: "Clean/short", unit: "allocs/op", op: "==", want: 0},
	{group: "fetch", what: "fetch 64MiB vs hashing limit", num: "Fetch/64MiB", den: "SHA256/cached", unit: "B/s", op: ">=", want: 0.8},
	{group: "fetch", what: "fetch 64MiB vs plain baseline", num: "Fetch/64MiB", den: "Baseline/64MiB", unit: "B/s", op: ">=", want: 1.3},
	{group: "fetch", what: "fetch heap 64MiB vs 1MiB (B/op)", num: "Fetch/64MiB", den: "Fetch/1MiB", unit: "B/op", spread: true, op: "<=", want: 2},
	{group: "fetch", what: "fetch to DirStore vs discarding", num: "Fetch/64MiB-dirstore", den: "Fetch/64MiB", unit: "B/s", op: ">=", want: 0.8},
	{group: "fetch", what: "fetch gzip vs http+gzip+sha256", num: "FetchGzip", den: "Baseline/gzip", unit: "B/s", op: ">=", want: 0.95},
	{group: "refs", what: "refs hit/2000 vs map/2000", num: "Register/hit/2000", den: "MapLookup/2000", unit: "sec/op", op: "<=", want: 5},
	{group: "refs", what: "refs hit/1e6 vs map/1e6", num: "Register/hit/1000000", den: "MapLookup/1000000", unit: "sec/op", op: "<=", want: 5},
	{group: "refs", what: "refs get/2000 vs map/2000", num: "Get/2000", den: "MapLookup/2000", unit: "sec/op", op: "<=", want: 5},
	{group: "refs", what: "refs get/1e6 vs map/1e6", num: "Get/1000000", den: "MapLookup/1000000", unit: "sec/op", op: "<=", want: 5},
	{group: "refs", what: "refs hit/1e6 allocs/op", num: "Register/hit/1000000", unit: "allocs/op", op: "==", want: 0},
	{group: "refs", what: "refs get/1e6 allocs/op", num: "Get/1000000", unit: "allocs/op", op: "==", want: 0},
	{group: "refs", what: "refs heap per record at 1e6 (B)", num: "HeapPerRecord", unit: "heap-B/record", op: "<=", want: 400},
	{group: "convert", what: "convert 100 blocks vs decode-only", num: "Render/100blocks", den: "Render/100blocks/decode-only", unit: "sec/op", op: "<=", want: 1.5},
	{group: "convert", what: "convert 1MiB-name stub vs stub (bytes)", num: "Render/1MiBname", den: "Render/stub", unit: "out-bytes", op: "==", want: 1},
	{group: "convert", what: "convert hostile source vs 6-char name", num: "RenderLinear/1MiB-name", den: "RenderLinear/short-name", unit: "sec/op", op: "<=", want: 2},
	{group: "hostflow", what: "host flow 8 fetchers vs 1 (speed)", num: "HostFlow/fetchers=8", den: "HostFlow/fetchers=1", unit: "sec/op", invert: true, op: ">=", want: 1.7},
}

// values maps a benchmark name and a unit to a value.
type values map[string]map[string]float64

func (v values) set(name, unit string, x float64) {
	if v[name] == nil {
		v[name] = map[string]float64{}
	}
	v[name][unit] = x
}

func (v values) get(name, unit string) (float64, bool) {
	x, ok := v[name][unit]
	return x, ok
}

// A result is what one group's run measured: benchstat's medians, the
// values of each round, benchstat's table, and the share of the machine
// other processes used meanwhile.
type result struct {
	medians values
	rounds  []values
	table   string
	others  float64
	err     error
}

type config struct {
	root, tmp  string
	count      int
	benchtime  string
	peer, node string
	verbose    bool
	keep       string
}

func main() {
	var cfg config
	flag.IntVar(&cfg.count, "count", 6, "rounds: how often each benchmark runs")
	flag.StringVar(&cfg.benchtime, "benchtime", "1s", "-test.benchtime of each run, unless a benchmark sets its own")
	flag.StringVar(&cfg.peer, "peer", filepath.Join("..", "shared", "bench", "label-peer.mjs"), "the label peer script")
	only := flag.String("groups", "", "comma-separated groups to run (default all: label,fetch,refs,convert,hostflow)")
	flag.StringVar(&cfg.keep, "keep", "", "a directory to keep the raw benchmark output in")
	flag.BoolVar(&cfg.verbose, "v", false, "print each command as it runs")
	flag.Parse()
	if cfg.count < 1 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(cfg, *only); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(cfg config, only string) error {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(gomod)) == "" || strings.TrimSpace(string(gomod)) == os.DevNull {
		return errors.New("run from inside the module")
	}
	cfg.root = filepath.Dir(strings.TrimSpace(string(gomod)))
	if !filepath.IsAbs(cfg.peer) {
		cfg.peer = filepath.Join(cfg.root, cfg.peer)
	}
	cfg.node, _ = exec.LookPath("node")
	if cfg.tmp, err = os.MkdirTemp("", "refcore-bench-"); err != nil {
		return err
	}
	defer os.RemoveAll(cfg.tmp)

	chosen := groups
	if only != "" {
		chosen = nil
		for _, name := range strings.Split(only, ",") {
			i := slices.IndexFunc(groups, func(g group) bool { return g.name == name })
			if i < 0 {
				return fmt.Errorf("no group %q", name)
			}
			chosen = append(chosen, groups[i])
		}
	}
	fmt.Printf("refcore benchmarks: %d interleaved rounds, -benchtime %s, %s, %d CPUs, %s\n\n",
		cfg.count, cfg.benchtime, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	results := map[string]*result{}
	for _, g := range chosen {
		r := runGroup(cfg, g)
		results[g.name] = r
		fmt.Printf("== %s (other processes used %.0f%% of the machine meanwhile)\n", g.name, 100*r.others)
		if r.err != nil {
			fmt.Printf("error: %v\n\n", r.err)
			continue
		}
		fmt.Println(r.table)
	}
	return report(os.Stdout, chosen, results)
}

// runGroup builds the group's test binaries and runs its members in
// interleaved rounds.
func runGroup(cfg config, g group) *result {
	r := &result{medians: values{}}
	bins := map[string]string{}
	for _, m := range g.members {
		if m.pkg == "" || bins[m.pkg] != "" {
			continue
		}
		bin := filepath.Join(cfg.tmp, strings.Trim(filepath.Base(m.pkg), ".")+".test")
		cmd := exec.Command("go", "test", "-c", "-o", bin, m.pkg)
		cmd.Dir, cmd.Stderr = cfg.root, os.Stderr
		if err := cmd.Run(); err != nil {
			r.err = fmt.Errorf("building %s: %w", m.pkg, err)
			return r
		}
		bins[m.pkg] = bin
	}
	var raw bytes.Buffer
	load := startLoad()
	for round := range cfg.count {
		vals := values{}
		order := slices.Clone(g.members)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, m := range order {
			if m.rounds > 0 && round >= m.rounds {
				continue
			}
			out, err := runMember(cfg, m, bins[m.pkg])
			if err != nil {
				r.err = err
				return r
			}
			raw.Write(out)
			parseBench(out, vals)
		}
		r.rounds = append(r.rounds, vals)
	}
	r.others = load()
	file := filepath.Join(cfg.tmp, g.name+".txt")
	if cfg.keep != "" {
		os.MkdirAll(cfg.keep, 0o755)
		file = filepath.Join(cfg.keep, g.name+".txt")
	}
	if err := os.WriteFile(file, raw.Bytes(), 0o644); err != nil {
		r.err = err
		return r
	}
	table, err := benchstat(cfg, file)
	if err != nil {
		r.err = err
		return r
	}
	r.table = table
	csvOut, err := benchstat(cfg, "-format", "csv", file)
	if err != nil {
		r.err = err
		return r
	}
	r.err = parseCSV(csvOut, r.medians)
	return r
}

// runMember runs one member once and returns its benchmark lines.
func runMember(cfg config, m member, bin string) ([]byte, error) {
	if m.pkg == "" {
		return runPeer(cfg)
	}
	benchtime := orDefault(m.benchtime, cfg.benchtime)
	cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", m.bench, "-test.benchmem",
		"-test.count", "1", "-test.benchtime", benchtime)
	cmd.Dir = filepath.Join(cfg.root, m.pkg)
	cmd.Stderr = os.Stderr
	if cfg.verbose {
		fmt.Fprintln(os.Stderr, "bench:", m.pkg, strings.Join(cmd.Args[1:], " "))
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s -test.bench %s: %w\n%s", m.pkg, m.bench, err, out)
	}
	if !bytes.Contains(out, []byte("\nBenchmark")) {
		return nil, fmt.Errorf("%s -test.bench %s ran no benchmark", m.pkg, m.bench)
	}
	return out, nil
}

// runPeer runs label-peer.mjs and returns its lines as benchmark lines of
// BenchmarkPeer/<input>.
func runPeer(cfg config) ([]byte, error) {
	if cfg.node == "" {
		return nil, errors.New("the label peer needs node on PATH")
	}
	cmd := exec.Command(cfg.node, cfg.peer)
	cmd.Stderr = os.Stderr
	if cfg.verbose {
		fmt.Fprintln(os.Stderr, "bench: node", cfg.peer)
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", cfg.peer, err)
	}
	var b bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var line struct {
			Input string  `json:"input"`
			NsOp  float64 `json:"ns_per_op"`
			MBs   float64 `json:"mb_per_s"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Input == "" {
			continue
		}
		fmt.Fprintf(&b, "BenchmarkPeer/%s \t1\t%g ns/op\t%g MB/s\n", line.Input, line.NsOp, line.MBs)
	}
	if b.Len() == 0 {
		return nil, fmt.Errorf("node %s printed no result", cfg.peer)
	}
	return b.Bytes(), nil
}

func benchstat(cfg config, args ...string) (string, error) {
	cmd := exec.Command("go", append([]string{"run", benchstatTool}, args...)...)
	cmd.Dir = cfg.tmp // outside the module: the tool is no dependency of it
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("benchstat: %w\n%s", err, stderr.Bytes())
	}
	return string(out), nil
}

// procSuffix is the -N that go test appends to a benchmark's name.
var procSuffix = regexp.MustCompile(`-\d+$`)

// cleanName is a benchmark's name as the targets spell it: without the
// Benchmark prefix and the -N suffix.
func cleanName(s string) string {
	return procSuffix.ReplaceAllString(strings.TrimPrefix(s, "Benchmark"), "")
}

// parseBench reads go test's benchmark lines into v, in benchstat's units.
func parseBench(out []byte, v values) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := cleanName(f[0])
		for i := 2; i+1 < len(f); i += 2 {
			x, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			switch unit := f[i+1]; {
			case strings.HasSuffix(unit, "ns/op"):
				// benchstat reads ns/op, and a metric such as
				// cpu-ns/op, in seconds as sec/op and cpu-sec/op.
				v.set(name, strings.TrimSuffix(unit, "ns/op")+"sec/op", x/1e9)
			case unit == "MB/s":
				v.set(name, "B/s", x*1e6)
			default:
				v.set(name, unit, x)
			}
		}
	}
}

// parseCSV reads benchstat's CSV output: for each unit a header row
// naming it (",<unit>,CI"), then one row per benchmark with its median.
// Lines of configuration (goos: …) may come first.
func parseCSV(out string, v values) error {
	rd := csv.NewReader(strings.NewReader(out))
	rd.FieldsPerRecord = -1
	rows, err := rd.ReadAll()
	if err != nil {
		return fmt.Errorf("benchstat csv: %w", err)
	}
	unit := ""
	for _, row := range rows {
		switch {
		case len(row) < 2:
			continue
		case row[0] == "" && len(row) >= 3 && row[2] == "CI":
			unit = row[1]
		case row[0] == "" || row[0] == "geomean" || row[1] == "" || unit == "":
			continue
		default:
			if x, err := strconv.ParseFloat(row[1], 64); err == nil {
				v.set(cleanName(row[0]), unit, x)
			}
		}
	}
	return nil
}

// measure evaluates t on the medians, and the range of the ratio over the
// rounds in which both sides ran.
func (t target) measure(r *result) (x, lo, hi float64, ok bool) {
	ratio := func(v values) (float64, bool) {
		a, ok := v.get(t.num, t.unit)
		if !ok {
			return 0, false
		}
		if t.den == "" {
			return a, true
		}
		b, ok := v.get(t.den, t.unit)
		if !ok {
			return 0, false
		}
		switch {
		case t.spread:
			a, b = max(a, b), min(a, b)
		case t.invert:
			a, b = b, a
		}
		if b == 0 {
			if a == 0 {
				return 1, true
			}
			return math.Inf(1), true
		}
		return a / b, true
	}
	x, ok = ratio(r.medians)
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range r.rounds {
		if y, ok := ratio(v); ok {
			lo, hi = min(lo, y), max(hi, y)
		}
	}
	return x, lo, hi, ok
}

func (t target) pass(x, want float64) bool {
	switch t.op {
	case ">=":
		return x >= want
	case "<=":
		return x <= want
	}
	return math.Abs(x-want) <= 1e-9*math.Max(1, math.Abs(want))
}

// busy is the share of the machine other processes may use before a
// target's busyWant applies.
const busy = 0.25

// report prints one line per target and reports an error when any target
// failed or could not be measured.
func report(w io.Writer, chosen []group, results map[string]*result) error {
	fmt.Fprintf(w, "%-40s %-12s %-22s %-9s %s\n", "target", "measured", "rounds (min-max)", "target", "result")
	failed := 0
	for _, t := range targets {
		r := results[t.group]
		if r == nil {
			continue
		}
		want := fmt.Sprintf("%s %s", t.op, num(t.want))
		if r.err != nil {
			fmt.Fprintf(w, "%-40s %-12s %-22s %-9s %s\n", t.what, "-", "-", want, "FAIL (group did not run)")
			failed++
			continue
		}
		x, lo, hi, ok := t.measure(r)
		if !ok {
			fmt.Fprintf(w, "%-40s %-12s %-22s %-9s %s\n", t.what, "-", "-", want, "MISSING (benchmark not found)")
			failed++
			continue
		}
		verdict := "PASS"
		if !t.pass(x, t.want) {
			verdict = "FAIL"
			if t.busyWant != 0 && r.others >= busy && t.pass(x, t.busyWant) {
				verdict = fmt.Sprintf("PASS (busy machine: %s %s)", t.op, num(t.busyWant))
			} else {
				failed++
			}
		}
		spread := "-"
		if len(r.rounds) > 1 && lo <= hi {
			spread = num(lo) + "-" + num(hi)
		}
		fmt.Fprintf(w, "%-40s %-12s %-22s %-9s %s\n", t.what, num(x), spread, want, verdict)
	}
	reportCPU(w, results)
	if failed > 0 {
		return fmt.Errorf("%d targets failed or were not measured", failed)
	}
	return nil
}

// cpuBound is the largest ratio speed target t could measure on this
// machine given the CPU time its measured side spent: that side cannot
// take less time than its CPU time spread over every processor. It is
// known for a target that wants a speed at least some multiple of its
// baseline's, where the measured side reports cpu-ns/op (the process's
// CPU time per operation, an in-process test server's included). It
// returns the bound and that CPU time in seconds.
func (t target) cpuBound(r *result) (bound, cpu float64, ok bool) {
	speed := (t.unit == "B/s" && !t.invert) || (t.unit == "sec/op" && t.invert)
	if t.op != ">=" || t.den == "" || t.spread || !speed {
		return 0, 0, false
	}
	cpu, ok = r.medians.get(t.num, "cpu-sec/op")
	if !ok || cpu <= 0 {
		return 0, 0, false
	}
	// Both a ratio of speeds (B/s) and an inverted ratio of times come to
	// the baseline's time over the measured side's.
	base, ok := r.medians.get(t.den, "sec/op")
	if !ok {
		return 0, 0, false
	}
	return base * float64(cpus) / cpu, cpu, true
}

// reportCPU prints, under the targets, each speed target's bound from CPU
// time (see [target.cpuBound]) beside its measured ratio. A bound below
// the target says the target needs less CPU work, not better overlap; a
// measured ratio well below its bound says the processors sat idle.
func reportCPU(w io.Writer, results map[string]*result) {
	header := false
	for _, t := range targets {
		r := results[t.group]
		if r == nil || r.err != nil {
			continue
		}
		x, _, _, ok := t.measure(r)
		bound, cpu, bok := t.cpuBound(r)
		if !ok || !bok {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nCPU time: no run finishes sooner than its CPU time spread over the %d CPUs\n", cpus)
			fmt.Fprintf(w, "%-40s %-12s %-12s %s\n", "target", "measured", "at most", "CPU time per op")
			header = true
		}
		fmt.Fprintf(w, "%-40s %-12s %-12s %s ms\n", t.what, num(x), num(bound), strconv.FormatFloat(cpu*1e3, 'f', 0, 64))
	}
}

// num prints a ratio or a count briefly.
func num(x float64) string {
	switch {
	case math.IsInf(x, 0):
		return "inf"
	case x == 0:
		return "0"
	case math.Abs(x) >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case math.Abs(x) >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

func orDefault(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// startLoad starts measuring the CPU time other processes use; the
// returned function reports it as a share of the machine since the start.
// The children of this program (the benchmarks) are not counted.
func startLoad() func() float64 {
	busy0, total0 := cpuTimes()
	self0 := childCPU()
	start := time.Now()
	return func() float64 {
		busy1, total1 := cpuTimes()
		if total1 <= total0 {
			return 0
		}
		// /proc/stat counts in clock ticks, nearly always 100 a second.
		elapsed := time.Since(start).Seconds() * float64(runtime.NumCPU())
		other := (busy1-busy0)/100 - (childCPU() - self0)
		return max(0, min(1, other/elapsed))
	}
}

// cpuTimes returns the machine's busy and total clock ticks from
// /proc/stat (zero where it cannot be read).
func cpuTimes() (busy, total float64) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	for i, s := range f[1:] {
		x, _ := strconv.ParseFloat(s, 64)
		if i == 3 || i == 4 { // idle, iowait
			total += x
			continue
		}
		if i < 8 { // user nice system idle iowait irq softirq steal
			busy += x
			total += x
		}
	}
	return busy, total
}

// childCPU is the CPU time, in seconds, of this program's finished
// children.
func childCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// cpus is how many processors the bounds of CPU time spread the work over.
var cpus = runtime.NumCPU()
