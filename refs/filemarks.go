package refs

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A FileMarks is a mark store on disk.
var _ MarkStore = (*FileMarks)(nil)

// ErrMarkFileCorrupt is the error [OpenFileMarks] returns, wrapped with the
// file's name and the line number, for a file that is not a mark file or
// holds a line it cannot read. Test for it with errors.Is.
var ErrMarkFileCorrupt = errors.New("refs: mark file is corrupt")

// fileMarksHeader is the first line of every mark file: it names the
// format and its version, and keeps OpenFileMarks from taking another
// file, given by mistake, for a mark file.
const fileMarksHeader = "refcore-marks 1\n"

// compactMinLines is how many mark lines a file may hold before
// compaction is considered at all.
const compactMinLines = 1024

// markKeyDigestLen is the length of a SHA-256 digest in unpadded base64url.
const markKeyDigestLen = 43

// errMarkKey is Mark's error for a key that is not a store key. It never
// quotes the key, which could be a uri passed by mistake.
var errMarkKey = errors.New(`refs: a mark key must be "sha256:" and 43 base64url characters`)

// FileMarks is a [MarkStore] that keeps never marks in a file, so that
// they survive a restart of the process or of the machine. Set it as
// [Config.Marks]; make one with [OpenFileMarks] and close it when the
// registries using it are done. It is safe for concurrent use.
//
// Mark returns only once the mark's line is written and synced to disk;
// marks made at the same time, from many goroutines, share one write and
// one sync. A mark that was already recorded, by this process or an
// earlier one, is not written again. Marked answers from memory and never
// touches the disk.
//
// The file is a header line followed by one line per mark: the key, a
// space, and the server's name as a Go quoted string. Keys are the hashed
// form the registry passes ("sha256:" and 43 base64url characters), so the
// file never holds a uri or a credential; Mark refuses a key of any other
// form. The file is created with permission 0600.
//
// The file keeps every mark it is given, and every mark in it is held in
// memory while it is open: both grow with the number of distinct (uri,
// server) marks, and the per-server bound a registry puts on the marks it
// keeps in memory ([Config.MarkBound]) does not apply here. A line can be
// written twice when a disk error made an earlier Mark fail and the
// registry tried again; once the file holds more than 1,024 lines and more
// than twice as many lines as distinct marks, it is rewritten without the
// duplicates: written to the same path with ".tmp" appended, synced, and
// renamed over the file. A rewrite never drops a mark and keeps the file's
// permission. A rewrite that fails leaves the file as it was and is tried
// again later.
//
// Only one FileMarks may use a file at a time, in one process: nothing
// stops two processes, or two opens in one process, from writing the
// same file, and the file would then lose marks or become unreadable.
// Give each host process its own file.
type FileMarks struct {
	path string
	perm os.FileMode // the file's permission, kept by a rewrite

	// qmu guards queue: the Marks waiting to be written, in order of
	// arrival. The writer that next holds wsem takes them all.
	qmu   sync.Mutex
	queue []*markWaiter

	// wsem serializes the writers (Mark, the rewrite, Close) and is held
	// across their disk I/O: a writer sends its one token to take it and
	// receives it back to give it up. A channel rather than a mutex, so
	// that a Mark can stop waiting when its context ends. The fields below
	// it are the writers' alone.
	wsem      chan struct{}
	f         *os.File // nil after Close, or while a reopen after a rewrite failed
	size      int64    // bytes of whole lines in the file, the header included
	lines     int      // mark lines in the file, duplicates included
	torn      bool     // a failed write may have left a partial line past size
	dirDirty  bool     // a rename is not yet synced to the directory
	compactAt int      // lines at which a rewrite is next considered

	// mu guards the memory readers see. A writer holds wsem first.
	mu     sync.RWMutex
	closed bool
	pairs  map[filePair]bool // every mark written; true once synced to disk
	keys   map[string]int    // key -> how many servers' marks on it are written
}

// filePair is one server's mark on one key.
type filePair struct{ key, server string }

// OpenFileMarks opens the mark file at path, creating it (with permission
// 0600) if it does not exist, and reads every mark in it into memory. The
// file stays open for appending until [FileMarks.Close].
//
// A crash while a mark was being written can leave a partial last line
// with no newline after it; that mark was never reported done, and
// OpenFileMarks cuts the partial line away. Any other line it cannot read,
// or a file that does not start with the mark file header, is an error
// wrapping [ErrMarkFileCorrupt], and the file is left untouched: a
// damaged file never silently forgets marks, and the host decides whether
// to repair it, move it aside, or refuse to start. OpenFileMarks also
// fails on an empty path, a path that is not a regular file, and on any
// error reading, writing or syncing the file or the directory holding it
// (which it syncs at every open, so that a rewrite an earlier process
// renamed into place is durable before its marks count as recorded).
func OpenFileMarks(path string) (*FileMarks, error) {
	if path == "" {
		return nil, errors.New("refs: OpenFileMarks: empty path")
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("refs: opening mark file: %w", err)
	}
	m, err := loadFileMarks(path, f)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return m, nil
}

// loadFileMarks reads f, repairs a torn last line or header, and returns
// the store over it.
func loadFileMarks(path string, f *os.File) (*FileMarks, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("refs: opening mark file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("refs: mark file %s is not a regular file", path)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("refs: reading mark file: %w", err)
	}
	m := &FileMarks{
		path:      path,
		perm:      info.Mode().Perm(),
		wsem:      make(chan struct{}, 1),
		f:         f,
		compactAt: compactMinLines,
		pairs:     make(map[filePair]bool),
		keys:      make(map[string]int),
	}
	whole, err := m.parse(data)
	if err != nil {
		return nil, err
	}
	if whole < int64(len(data)) {
		// A torn last line, or a torn header: cut it so the next line
		// starts fresh.
		if err := f.Truncate(whole); err != nil {
			return nil, fmt.Errorf("refs: cutting a partial line from the mark file: %w", err)
		}
	}
	m.size = whole
	if whole == 0 {
		if _, err := f.WriteString(fileMarksHeader); err != nil {
			return nil, fmt.Errorf("refs: writing mark file: %w", err)
		}
		m.size = int64(len(fileMarksHeader))
	}
	// What the file holds may not all be on disk yet (a process that
	// crashed after writing); marks read from it count as synced after this.
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("refs: syncing mark file: %w", err)
	}
	// The directory too: a new file's name, or a rewrite's rename that an
	// earlier process could not sync, is durable only after this.
	if err := syncMarkDir(path); err != nil {
		return nil, fmt.Errorf("refs: syncing the mark file's directory: %w", err)
	}
	m.dirDirty = false
	m.maybeCompact()
	return m, nil
}

// parse records the marks in data and returns the length of its whole
// lines: what follows them is a torn line (or torn header) to cut. It
// fails on a file that is not a mark file and on a bad whole line.
func (m *FileMarks) parse(data []byte) (int64, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		if bytes.HasPrefix([]byte(fileMarksHeader), data) {
			return 0, nil // empty, or a header torn while the file was made
		}
		return 0, m.corrupt(1, "it is not a mark file")
	}
	if string(data[:nl+1]) != fileMarksHeader {
		return 0, m.corrupt(1, "it is not a mark file, or not of this version")
	}
	off := nl + 1
	for n := 2; ; n++ {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			return int64(off), nil
		}
		key, server, why := parseMarkLine(data[off : off+nl])
		if why != "" {
			return 0, m.corrupt(n, why)
		}
		m.addLocked(filePair{key, server}, true)
		m.lines++
		off += nl + 1
	}
}

func (m *FileMarks) corrupt(line int, why string) error {
	return fmt.Errorf("%w: %s, line %d: %s", ErrMarkFileCorrupt, m.path, line, why)
}

// parseMarkLine reads "<key> <quoted server>", strictly: the server must
// be quoted exactly as strconv.Quote quotes it. why is "" on success; it
// never quotes the line.
func parseMarkLine(line []byte) (key, server, why string) {
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return "", "", "a mark line has no server"
	}
	key = string(line[:sp])
	if !validMarkKey(key) {
		return "", "", "a mark line's key is not a sha256 key"
	}
	quoted := string(line[sp+1:])
	server, err := strconv.Unquote(quoted)
	if err != nil || strconv.Quote(server) != quoted {
		return "", "", "a mark line's server is not a quoted string"
	}
	return key, server, ""
}

// validMarkKey reports whether key is "sha256:" and a base64url SHA-256
// digest without padding: the only keys the registry gives a store.
func validMarkKey(key string) bool {
	digest, ok := strings.CutPrefix(key, "sha256:")
	if !ok || len(digest) != markKeyDigestLen {
		return false
	}
	for i := range len(digest) {
		c := digest[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// markLine is the file's line for p.
func markLine(p filePair) []byte {
	line := make([]byte, 0, len(p.key)+len(p.server)+4)
	line = append(line, p.key...)
	line = append(line, ' ')
	line = strconv.AppendQuote(line, p.server)
	return append(line, '\n')
}

// addLocked records p in memory; synced says it is on disk. The caller
// holds mu, or owns m alone.
func (m *FileMarks) addLocked(p filePair, synced bool) {
	was, ok := m.pairs[p]
	if !ok {
		m.keys[p.key]++
	}
	m.pairs[p] = was || synced
}

// Mark records server's mark on key, which must be "sha256:" and 43
// base64url characters (the form the registry passes). It returns nil
// once the mark is on disk: its line written and the file synced. A mark
// already recorded for that key and server returns nil at once. It fails
// when the store is closed and on a disk error; the registry then keeps
// the mark in memory and calls Mark again at the uri's next never.
//
// It fails with ctx's error when ctx is done before Mark begins or while
// it waits for another mark's write to finish (on a disk that hangs, that
// write may never finish). Its line is then not written, unless a write
// under way had already taken it; that write may still put it in the
// file, and a later Mark of it then returns nil at once.
//
// Marks made at the same time share the disk's work: a Mark that arrives
// while another is writing waits for it, and is then written, in one
// write and one sync, with every other mark that waited meanwhile. A
// disk error fails every mark of that write.
func (m *FileMarks) Mark(ctx context.Context, key, server string) error {
	if !validMarkKey(key) {
		return errMarkKey
	}
	return m.mark(ctx, []filePair{{key, server}})
}

// MarkAll records server's marks on keys as [FileMarks.Mark] records each,
// with one write and one sync for all of them (fewer than one per key
// when other marks share the write). It returns nil once every mark is on
// disk; on an error, some may be. A key not in the registry's form fails
// the whole call before anything is written.
func (m *FileMarks) MarkAll(ctx context.Context, keys []string, server string) error {
	pairs := make([]filePair, len(keys))
	for i, k := range keys {
		if !validMarkKey(k) {
			return errMarkKey
		}
		pairs[i] = filePair{k, server}
	}
	return m.mark(ctx, pairs)
}

// mark is Mark and MarkAll: it queues a waiter for each pair not yet on
// disk and waits until a write has answered them all.
func (m *FileMarks) mark(ctx context.Context, pairs []filePair) error {
	if m.wsem == nil {
		return errFileMarksUnopened
	}
	var ws []*markWaiter
	m.mu.RLock()
	closed := m.closed
	for _, p := range pairs {
		if !m.pairs[p] {
			// Until a writer answers it, the answer is that the write did
			// not finish: a writer that took w and then panicked (its
			// caller recovering, as net/http does for a handler) must not
			// leave w answered nil.
			ws = append(ws, &markWaiter{p: p, ctx: ctx, err: errMarkWriteUnfinished})
		}
	}
	m.mu.RUnlock()
	if closed {
		return errFileMarksClosed
	}
	if len(ws) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The waiters join the queue together, so the writer that takes one
	// takes them all.
	m.qmu.Lock()
	m.queue = append(m.queue, ws...)
	m.qmu.Unlock()
	if testHookMarkWaits != nil {
		testHookMarkWaits()
	}
	select {
	case m.wsem <- struct{}{}:
	case <-ctx.Done():
		// Another write is under way, perhaps on a disk that hangs. The
		// writer that takes ws from the queue later sees ctx done and
		// writes nothing for them; one that took them already may write
		// them (a later Mark of one then returns nil).
		return ctx.Err()
	}
	defer func() { <-m.wsem }()
	if !ws[0].done {
		// No writer took ws yet: this call writes every mark queued now.
		m.qmu.Lock()
		batch := m.queue
		m.queue = nil
		m.qmu.Unlock()
		m.commit(batch)
	}
	for _, w := range ws {
		if w.err != nil {
			return w.err
		}
	}
	return nil
}

// A markWaiter is a Mark waiting for its line to be written. err and done
// are set by the writer that takes it, holding wsem, and read by its Mark
// holding wsem; err starts as errMarkWriteUnfinished.
type markWaiter struct {
	p    filePair
	ctx  context.Context
	err  error
	done bool
}

// commit writes the marks of batch that are still to write, with one
// write and one sync, and gives each waiter its answer. The caller holds
// wsem.
func (m *FileMarks) commit(batch []*markWaiter) {
	var (
		lines []byte
		take  []*markWaiter         // the waiters whose lines are written
		first map[filePair]struct{} // the pairs written, each once
	)
	func() {
		m.mu.RLock()
		defer m.mu.RUnlock()
		for _, w := range batch {
			w.done = true
			switch {
			case m.closed:
				w.err = errFileMarksClosed
			case m.pairs[w.p]:
				w.err = nil // written and synced since this Mark looked
			case w.ctx.Err() != nil:
				w.err = w.ctx.Err()
			default:
				// w.err stays errMarkWriteUnfinished until the write
				// below answers it.
				if first == nil {
					first = make(map[filePair]struct{})
				}
				if _, ok := first[w.p]; !ok {
					first[w.p] = struct{}{}
					lines = append(lines, markLine(w.p)...)
				}
				take = append(take, w)
			}
		}
	}()
	if len(take) == 0 {
		return
	}
	whole, err := m.appendLines(lines, len(first))
	if whole {
		// A line in the file counts for Marked even when its sync
		// failed, and a rewrite keeps it; Mark writes it again.
		m.mu.Lock()
		for p := range first {
			m.addLocked(p, err == nil)
		}
		m.mu.Unlock()
	}
	for _, w := range take {
		w.err = err
	}
	if err == nil {
		m.maybeCompact()
	}
}

// syncMarkFile syncs the mark file after a write; tests replace it to
// count the syncs or to hold one.
var syncMarkFile = (*os.File).Sync

// syncMarkDir syncs the directory holding the mark file, at every open
// and after a rewrite; tests replace it to make it fail.
var syncMarkDir = syncDir

// testHookMarkWaits, if set, is called by Mark just before it waits to
// write, so a test knows when a Mark is queued behind a write under way.
var testHookMarkWaits func()

// errMarkWriteUnfinished is Mark's error when the write that took its
// mark, on another goroutine, ended without finishing.
var errMarkWriteUnfinished = errors.New("refs: the write of a mark did not finish")

// errFileMarksUnopened is Mark's error on a FileMarks that OpenFileMarks
// did not make.
var errFileMarksUnopened = errors.New("refs: a FileMarks must be made by OpenFileMarks")

// errFileMarksClosed is the error after Close; it matches os.ErrClosed.
var errFileMarksClosed = fmt.Errorf("refs: mark file: %w", os.ErrClosed)

// appendLines writes lines, which hold n mark lines, and syncs the file
// (and its directory after a rename). whole reports whether the lines
// reached the file whole, synced or not.
func (m *FileMarks) appendLines(lines []byte, n int) (whole bool, err error) {
	if err := m.ready(); err != nil {
		return false, err
	}
	k, err := m.f.Write(lines)
	if err == nil && k != len(lines) {
		err = io.ErrShortWrite
	}
	if err != nil {
		// Cut the partial line now if possible; ready tries again before
		// the next write.
		m.torn = true
		if m.f.Truncate(m.size) == nil {
			m.torn = false
		}
		return false, fmt.Errorf("refs: writing mark file: %w", err)
	}
	m.size += int64(k)
	m.lines += n
	if err := syncMarkFile(m.f); err != nil {
		// The line is in the file but perhaps not on disk. A retry writes
		// it again rather than trusting a second sync.
		return true, fmt.Errorf("refs: syncing mark file: %w", err)
	}
	if m.dirDirty {
		if err := syncMarkDir(m.path); err != nil {
			return true, fmt.Errorf("refs: syncing the mark file's directory: %w", err)
		}
		m.dirDirty = false
	}
	return true, nil
}

// ready makes the file writable at its last whole line: it reopens it
// after a failed reopen and cuts a partial line a failed write left.
func (m *FileMarks) ready() error {
	if m.f == nil {
		if err := m.reopen(); err != nil {
			return fmt.Errorf("refs: reopening mark file: %w", err)
		}
	}
	if m.torn {
		if err := m.f.Truncate(m.size); err != nil {
			return fmt.Errorf("refs: cutting a partial line from the mark file: %w", err)
		}
		m.torn = false
	}
	return nil
}

// reopen opens the file at m.path for appending, expecting at least the
// m.size bytes this store wrote.
func (m *FileMarks) reopen() error {
	f, err := os.OpenFile(m.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", m.path)
	}
	if err == nil && info.Size() < m.size {
		err = fmt.Errorf("%s is shorter than this store wrote it; another writer changed it", m.path)
	}
	if err != nil {
		_ = f.Close()
		return err
	}
	m.f = f
	m.torn = m.torn || info.Size() > m.size
	return nil
}

// maybeCompact rewrites the file without duplicate lines once it has
// grown past the bound. A failed rewrite is tried again once the file has
// doubled.
func (m *FileMarks) maybeCompact() {
	if m.lines <= m.compactAt || m.lines <= 2*len(m.pairs) {
		return
	}
	if err := m.compact(); err != nil {
		m.compactAt = 2 * m.lines
		return
	}
	m.compactAt = compactMinLines
}

// compact writes every mark once to path+".tmp", syncs it, and renames it
// over the file. Marks written whose sync failed are kept too, and count
// as synced once the new file and the rename are.
func (m *FileMarks) compact() error {
	m.mu.RLock()
	all := make([]filePair, 0, len(m.pairs))
	for p := range m.pairs {
		all = append(all, p)
	}
	m.mu.RUnlock()
	slices.SortFunc(all, func(a, b filePair) int {
		return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.server, b.server))
	})
	tmp := m.path + ".tmp"
	size, err := writeMarkFile(tmp, m.perm, all)
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	// Windows cannot rename over an open file: close it first. Every
	// line in it is synced or repeated in the new file.
	if m.f != nil {
		_ = m.f.Close()
		m.f = nil
	}
	if err := os.Rename(tmp, m.path); err != nil {
		_ = os.Remove(tmp)
		_ = m.reopen() // on failure, ready tries again before the next write
		return err
	}
	m.size, m.lines, m.torn = size, len(all), false
	// Until the directory is synced, a crash could bring back the old
	// file; the next Mark that writes syncs it before reporting done.
	// Only then do the marks whose own sync failed count as synced:
	// the old file may not hold them, and a Mark of one writes it again.
	// dirDirty is set first, so that it holds if the sync panics.
	m.dirDirty = true
	m.dirDirty = syncMarkDir(m.path) != nil
	if !m.dirDirty {
		m.mu.Lock()
		for _, p := range all {
			m.pairs[p] = true
		}
		m.mu.Unlock()
	}
	_ = m.reopen()
	return nil
}

// writeMarkFile writes a mark file holding marks to path, synced, and
// returns its size.
func writeMarkFile(path string, perm os.FileMode, marks []filePair) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriter(f)
	size, _ := w.WriteString(fileMarksHeader)
	for _, p := range marks {
		n, _ := w.Write(markLine(p))
		size += n
	}
	err = w.Flush()
	if err == nil && perm != 0o600 {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return int64(size), err
}

// syncDir syncs the directory holding path, so that a file created or
// renamed there survives a crash. Windows has no such call; there it does
// nothing.
func syncDir(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Marked reports whether any server's mark on key is recorded. It reads
// memory only and fails only after [FileMarks.Close].
func (m *FileMarks) Marked(_ context.Context, key string) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return false, errFileMarksClosed
	}
	return m.keys[key] > 0, nil
}

// Close closes the file. Every mark Mark reported done is already on
// disk. After Close, Mark and Marked fail; closing again does nothing.
func (m *FileMarks) Close() error {
	if m.wsem == nil {
		return nil // not opened by OpenFileMarks: nothing to close
	}
	m.wsem <- struct{}{}
	defer func() { <-m.wsem }()
	m.mu.Lock()
	already := m.closed
	m.closed = true
	m.pairs, m.keys = nil, nil
	m.mu.Unlock()
	if already || m.f == nil {
		return nil
	}
	err := m.f.Close()
	m.f = nil
	return err
}
