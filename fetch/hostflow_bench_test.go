package fetch

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcplrefs/refcore/convert"
	"github.com/mcplrefs/refcore/refs"
)

// Host flow sizes (shared/bench/README.md).
const (
	flowResults = 1000    // tool results ingested and rendered
	flowRefs    = 10      // references per result, after one text block
	flowFetches = 100     // fetches per run
	flowPayload = 1 << 20 // bytes per fetch
)

// BenchmarkHostFlow is a whole host's work in one run: 1,000 tool results
// of one text and ten references each are ingested and rendered (history
// and push views), then 100 of the references, 1 MiB each, are fetched
// into a DirStore. /fetchers=1 does it all on one goroutine; /fetchers=8
// shares the results and the fetches among eight, as a host serving eight
// sessions would. Besides time, B/op and allocs/op it reports the peak
// heap of the run, sampled from runtime.MemStats every two milliseconds,
// the time of each phase (ingest-ns/op, fetch-ns/op), and the CPU time of
// the timed work, the test server's included (cpu-ns/op): with eight
// sessions no run can finish sooner than that time spread over the
// processors.
func BenchmarkHostFlow(b *testing.B) {
	payload := benchPayload(flowPayload)
	srv := payloadServer(b, payload, false)
	digest := digestOf(payload)
	// Each run's blocks are built outside the timing, with uris of its
	// own, so every fetch dials.
	blocks := func(run, result int) []json.RawMessage {
		out := []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"type":"text","text":"render %d of session %d finished"}`, result, run))}
		for j := range flowRefs {
			out = append(out, json.RawMessage(fmt.Sprintf(
				`{"type":"resource","uri":"%s/out/%d/%d/%d.wav?sig=0123456789abcdef","name":"take-%d-%d.wav","mimeType":"audio/wav","sizeBytes":%d,"digest":%q}`,
				srv.URL, run, result, j, result, j, flowPayload, digest)))
		}
		return out
	}
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("fetchers=%d", workers), func(b *testing.B) {
			dir := b.TempDir()
			var (
				peak           atomic.Uint64
				ingest, fetchd time.Duration
				cpu            time.Duration
			)
			stop := sampleHeap(&peak)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				results := make([][]json.RawMessage, flowResults)
				for r := range results {
					results[r] = blocks(i, r)
				}
				b.StartTimer()
				c0 := cpuTime()
				in, fe := hostFlow(b, srv.URL, results, filepath.Join(dir, fmt.Sprint(i)), workers)
				cpu += cpuTime() - c0
				ingest += in
				fetchd += fe
				b.StopTimer()
				emptyCopies(b, filepath.Join(dir, fmt.Sprint(i)))
				b.StartTimer()
			}
			b.StopTimer()
			stop()
			b.ReportMetric(float64(peak.Load()), "peak-heap-B")
			b.ReportMetric(float64(ingest.Nanoseconds())/float64(b.N), "ingest-ns/op")
			b.ReportMetric(float64(fetchd.Nanoseconds())/float64(b.N), "fetch-ns/op")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// hostFlow is one run: a fresh registry, converter, fetcher and store. It
// returns how long the ingest and the fetch phases took.
func hostFlow(b *testing.B, origin string, results [][]json.RawMessage, dir string, workers int) (ingest, fetchd time.Duration) {
	ctx := context.Background()
	if err := os.Mkdir(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	reg, err := refs.New(refs.Config{Capacity: flowResults * flowRefs * 2})
	if err != nil {
		b.Fatal(err)
	}
	store, err := NewDirStore(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	f, err := New(reg, ServersFunc(func(string) (Server, error) { return Server{Origin: origin}, nil }), store,
		Config{Budget: math.MaxInt64 / 2})
	if err != nil {
		b.Fatal(err)
	}
	conv, err := convert.New(reg, convert.Policy{Refusal: f.Refusal})
	if err != nil {
		b.Fatal(err)
	}
	src := convert.Source{Server: "bench", Lane: convert.LaneToolResult, Tool: "render"}

	// Ingest and render; remember one reference of every tenth result.
	ids := make([]string, flowFetches)
	start := time.Now()
	parallel(workers, len(results), func(r int) {
		ct := conv.Ingest(ctx, results[r], src)
		if len(ct.History()) == 0 || len(ct.Push()) == 0 {
			b.Error("an empty view")
		}
		if r%(flowResults/flowFetches) == 0 {
			ids[r/(flowResults/flowFetches)] = ct.IDs()[0]
		}
	})
	ingest = time.Since(start)
	start = time.Now()
	parallel(workers, len(ids), func(k int) {
		res, err := f.Fetch(ctx, ids[k], Request{})
		if err != nil || !res.DigestVerified || res.Bytes != flowPayload {
			b.Errorf("fetch %d: %v", k, err)
		}
	})
	return ingest, time.Since(start)
}

// emptyCopies truncates every file in dir to nothing, so that the copies'
// pages are dropped before they reach the disk, whose speed is not the
// host's. The files themselves stay until the benchmark's directory is
// removed. On ext4 without a journal, as on the test machine, a new file's
// inode is found by skipping each inode freed in the last minute or more
// (the kernel's recently_deleted check under find_inode_bit, which perf
// showed as most of a create's CPU time), so deleting the copies after
// every run made each later run's creates dearer than the run before.
func emptyCopies(b *testing.B, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Truncate(filepath.Join(dir, e.Name()), 0); err != nil {
			b.Fatal(err)
		}
	}
}

// parallel calls do(0) … do(n-1) on workers goroutines.
func parallel(workers, n int, do func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				do(i)
			}
		}()
	}
	wg.Wait()
}

// sampleHeap records the largest heap seen in peak until the returned
// function is called. It reads the bytes of live and not yet swept heap
// objects (runtime.MemStats.HeapAlloc) through runtime/metrics every two
// milliseconds: unlike runtime.ReadMemStats, that does not stop the
// world, which at this rate would itself slow the eight fetchers.
func sampleHeap(peak *atomic.Uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
