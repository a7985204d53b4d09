package copylock

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// held reports how many locks the table keeps: none once nobody holds or
// awaits one.
func held() int { return Len() }

func hold(t *testing.T, owner any, id string) func() {
	t.Helper()
	release, err := Hold(context.Background(), owner, id)
	if err != nil {
		t.Fatal(err)
	}
	return release
}

func TestDoRunsAtOnceWhenFree(t *testing.T) {
	var ran []bool
	Do("reg", "ref_a", func(later bool) { ran = append(ran, later) })
	if len(ran) != 1 || ran[0] {
		t.Fatalf("Do ran %v, want once at once (later false)", ran)
	}
	if n := held(); n != 0 {
		t.Errorf("the table keeps %d locks after Do, want 0", n)
	}
}

// TestDoHandsOverToHolder pins F20's ordering: a removal asked for while a
// fetch holds the record's lock returns at once and runs when the fetch
// lets go, before anyone else takes the lock.
func TestDoHandsOverToHolder(t *testing.T) {
	release := hold(t, "reg", "ref_a")
	var order []string
	Do("reg", "ref_a", func(later bool) {
		if !later {
			t.Error("a handed-over removal ran with later false")
		}
		order = append(order, "removal")
	})
	if len(order) != 0 {
		t.Fatal("Do ran while the lock was held")
	}
	// Another owner's and another record's locks are free.
	Do("other", "ref_a", func(bool) { order = append(order, "other owner") })
	Do("reg", "ref_b", func(bool) { order = append(order, "other record") })
	got := make(chan struct{})
	go func() {
		r := hold(t, "reg", "ref_a")
		order = append(order, "next fetch")
		r()
		close(got)
	}()
	release()
	<-got
	want := []string{"other owner", "other record", "removal", "next fetch"}
	if len(order) != len(want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
	if n := held(); n != 0 {
		t.Errorf("the table keeps %d locks, want 0", n)
	}
}

// TestHandedWorkHandsOver checks that work handed over while the holder
// runs the earlier handed work runs too, before the lock is free.
func TestHandedWorkHandsOver(t *testing.T) {
	release := hold(t, "reg", "ref_a")
	var n int
	Do("reg", "ref_a", func(bool) {
		n++
		Do("reg", "ref_a", func(bool) { n++ })
	})
	release()
	hold(t, "reg", "ref_a")() // taken once the handed work is done
	if n != 2 {
		t.Fatalf("%d of 2 handed functions ran", n)
	}
	if h := held(); h != 0 {
		t.Errorf("the table keeps %d locks, want 0", h)
	}
}

func TestHoldWaitsUntilContextEnds(t *testing.T) {
	release := hold(t, "reg", "ref_a")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := Hold(ctx, "reg", "ref_a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Hold of a held lock returned %v, want the context's end", err)
	}
	release()
	if n := held(); n != 0 {
		t.Errorf("the table keeps %d locks after a waiter gave up, want 0", n)
	}
	hold(t, "reg", "ref_a")()
}

// TestPanicInDoFreesLock checks that a panic in work Do runs at once
// reaches Do's caller and leaves the lock free.
func TestPanicInDoFreesLock(t *testing.T) {
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic of Do's work was swallowed")
			}
		}()
		Do("reg", "ref_p", func(bool) { panic("remover") })
	}()
	if n := held(); n != 0 {
		t.Fatalf("the table keeps %d locks after a panic, want 0", n)
	}
	hold(t, "reg", "ref_p")()
}

// TestLetGoDoesNotWait pins F12 for the holder of a lock to which slow
// work was handed: it lets go at once, and the lock stays held until the
// handed work is done.
func TestLetGoDoesNotWait(t *testing.T) {
	release := hold(t, "reg", "ref_w")
	open := make(chan struct{})
	Do("reg", "ref_w", func(bool) { <-open })
	released := make(chan struct{})
	go func() { release(); close(released) }()
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		close(open)
		t.Fatal("release waited for the handed work")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := Hold(ctx, "reg", "ref_w"); err == nil {
		t.Fatal("the lock was free while handed work ran")
	}
	close(open)
	hold(t, "reg", "ref_w")()
	if n := held(); n != 0 {
		t.Errorf("the table keeps %d locks, want 0", n)
	}
}

// TestOneAtATime runs fetches and removals on a few records at once (run
// it with -race): at most one runs on a record at any moment, every
// removal runs once, and no lock is kept afterwards.
func TestOneAtATime(t *testing.T) {
	ids := []string{"ref_a", "ref_b", "ref_c"}
	var busy [3]atomic.Int32
	var removals atomic.Int64
	enter := func(i int) {
		if busy[i].Add(1) != 1 {
			t.Error("two holders of one record at once")
		}
	}
	leave := func(i int) { busy[i].Add(-1) }
	var wg sync.WaitGroup
	const rounds = 300
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				i := (g + r) % len(ids)
				if (g+r)%2 == 0 {
					release := hold(t, "reg", ids[i])
					enter(i)
					leave(i)
					release()
				} else {
					Do("reg", ids[i], func(bool) {
						enter(i)
						removals.Add(1)
						leave(i)
					})
				}
			}
		}()
	}
	wg.Wait()
	for _, id := range ids { // taken once the handed work is done
		hold(t, "reg", id)()
	}
	if got, want := removals.Load(), int64(8*rounds/2); got != want {
		t.Errorf("%d removals ran, want %d", got, want)
	}
	if n := held(); n != 0 {
		t.Errorf("the table keeps %d locks, want 0", n)
	}
}
