package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// The access log is one line per request, in the process's log format,
// written in batches. Written straight to stderr, the line was one write
// system call per request: 9% of serve's CPU for a cached page under load
// (BENCHMARKS.md). AccessLog gathers the lines and writes them in one call
// once 64 KiB have gathered or 100 ms after the first of them, and on
// Close: a graceful stop loses none.
//
// Key decision: a request never waits for the log's destination. Lines
// wait in memory, up to 4 MiB (about 18,000 lines: 0.8 s at 22,000 req/s);
// past that, while the destination does not take what it was given (a
// full pipe, a stalled disk or journal), a new line is dropped and
// counted instead of queued: AccessLog.Dropped,
// ytrend_http_access_log_dropped_total, and a warning in the process's log
// (at most one every 10 s, and one at Close). An access log that waited
// would turn a slow log reader into an outage of the site.
//
// A line is whole or not there: each of the handler's writes is one line,
// appended whole or dropped whole, and a batch goes to the destination in
// one Write. The process's log and the access log share stderr, an
// *os.File, which makes each Write whole: a batch and a log line never
// interleave. A line only waits: the access log's lines may reach stderr
// up to 100 ms after log lines written later (each carries its time).

const (
	accessFlushBytes = 64 << 10
	accessFlushEvery = 100 * time.Millisecond
	accessMaxPending = 4 << 20
	// accessReportEvery spaces the warnings about dropped lines; the
	// metric counts every one at once.
	accessReportEvery = 10 * time.Second
	// accessCloseWait bounds the last write after a hard stop, which left
	// no time of its own: a destination that takes lines does so in
	// microseconds.
	accessCloseWait = time.Second
)

// errAccessLogFull is the line a request could not add: the destination
// has not taken the lines before it.
var errAccessLogFull = errors.New("access log: destination behind, line dropped")

// AccessLog is ytrend serve's access log. Hand it to Deps.AccessLog: the
// server's Stop closes it (a caller that mounts Handler elsewhere closes it
// itself).
type AccessLog struct {
	handler slog.Handler // the process's format, writing into w
	w       *accessWriter
}

// NewAccessLog writes the access log to dst, each line as format(w) writes
// it to the writer w it is given (main builds the process's handlers: the
// access log's lines look like its log's). log gets the warnings about
// dropped lines. Nothing runs until the first line.
func NewAccessLog(dst io.Writer, format func(io.Writer) slog.Handler, log *slog.Logger) *AccessLog {
	return newAccessLog(dst, format, log, accessFlushBytes, accessFlushEvery, accessMaxPending)
}

func newAccessLog(dst io.Writer, format func(io.Writer) slog.Handler, log *slog.Logger,
	flushBytes int, every time.Duration, maxPending int) *AccessLog {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &accessWriter{dst: dst, log: log, flushBytes: flushBytes, every: every, maxPending: maxPending,
		kick: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	return &AccessLog{handler: format(w), w: w}
}

// accessLine is what the access log says of one request.
type accessLine struct {
	id, client, method, path, route string
	code                            int
	bytes                           int64
	took                            time.Duration
}

// add writes l's line, as slog.Logger.Info("http", ...) did, without the
// logger's caller lookup: the access log has no source to show.
func (a *AccessLog) add(l accessLine) {
	ctx := context.Background()
	if !a.handler.Enabled(ctx, slog.LevelInfo) {
		return
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "http", 0)
	r.AddAttrs(slog.String("request_id", l.id), slog.String("client", l.client), slog.String("method", l.method),
		slog.String("path", l.path), slog.String("route", l.route), slog.Int("code", l.code),
		slog.Int64("bytes", l.bytes), slog.Float64("duration_ms", float64(l.took.Microseconds())/1000))
	_ = a.handler.Handle(ctx, r) // a dropped line is counted by the writer
}

// Dropped counts the lines dropped so far: refused while the destination
// was behind, or lost to an error writing them.
func (a *AccessLog) Dropped() int64 { return a.w.dropped.Load() }

// Close writes the lines not yet written and waits until the destination
// took them or ctx ends; after it, each line is written at once, in a
// write of its own (the requests a hard stop left running).
func (a *AccessLog) Close(ctx context.Context) error { return a.w.close(ctx) }

// accessWriter is the access log's batches: the handler's io.Writer.
type accessWriter struct {
	dst        io.Writer
	log        *slog.Logger
	flushBytes int           // a batch this large goes at once
	every      time.Duration // else this long after its first line
	maxPending int           // bytes waiting, at most

	kick    chan struct{} // a batch began or filled
	done    chan struct{} // closed by close
	stopped chan struct{} // run wrote the last batch
	stop    sync.Once

	dropped atomic.Int64

	// wmu is held while writing to dst, so a line written after close
	// follows the last batch.
	wmu sync.Mutex

	mu         sync.Mutex
	pending    []byte // whole lines, not yet handed to dst
	spare      []byte // the last batch's buffer, for the next one
	writing    int    // lines handed to dst, not yet taken
	started    bool   // run is running
	closed     bool
	unreported int64 // dropped since the last warning
	lastErr    error // the last write error since the last warning
	reported   time.Time
}

// Write adds p, one line, to the batch: whole, or not at all when the
// lines waiting would pass maxPending.
func (w *accessWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return w.writeNow(p)
	}
	n := len(w.pending)
	if n+len(p) > w.maxPending {
		w.unreported++
		w.mu.Unlock()
		w.dropped.Add(1)
		return 0, errAccessLogFull
	}
	w.pending = append(w.pending, p...)
	if !w.started {
		w.started = true
		go w.run()
	}
	w.mu.Unlock()
	if n == 0 || n < w.flushBytes && n+len(p) >= w.flushBytes {
		select {
		case w.kick <- struct{}{}:
		default: // run has one to take: it looks at the batch's size then
		}
	}
	return len(p), nil
}

// run writes a batch when it fills, or every after its first line, until
// close.
func (w *accessWriter) run() {
	defer close(w.stopped)
	t := time.NewTimer(w.every)
	t.Stop()
	for {
		select {
		case <-w.kick:
		case <-w.done:
			w.last()
			return
		}
		w.mu.Lock()
		full := len(w.pending) >= w.flushBytes
		w.mu.Unlock()
		if !full {
			t.Reset(w.every)
			select {
			case <-t.C:
			case <-w.kick: // filled
			case <-w.done:
			}
			t.Stop()
		}
		w.flush()
		w.report(false)
	}
}

// flush hands the batch to dst; the requests fill the next one meanwhile.
func (w *accessWriter) flush() {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.mu.Lock()
	batch := w.pending
	w.pending, w.spare = w.spare, nil
	w.writing = bytes.Count(batch, newline)
	w.mu.Unlock()
	w.write(batch)
	w.mu.Lock()
	w.writing = 0
	// A batch that grew while dst was behind is not kept.
	if cap(batch) <= 2*w.flushBytes {
		w.spare = batch[:0]
	}
	w.mu.Unlock()
}

// last writes what is left and has later lines written at once.
func (w *accessWriter) last() {
	w.wmu.Lock()
	w.mu.Lock()
	w.closed = true
	batch := w.pending
	w.pending, w.spare = nil, nil
	w.writing = bytes.Count(batch, newline)
	w.mu.Unlock()
	w.write(batch)
	w.wmu.Unlock()
	w.report(true)
}

var newline = []byte{'\n'}

// write writes b and counts the lines dst did not take.
func (w *accessWriter) write(b []byte) {
	if len(b) == 0 {
		return
	}
	n, err := w.dst.Write(b)
	if err == nil {
		return
	}
	lost := int64(bytes.Count(b[max(0, min(n, len(b))):], newline))
	w.dropped.Add(lost)
	w.mu.Lock()
	w.unreported += lost
	w.lastErr = err
	w.mu.Unlock()
}

// writeNow writes a line after close, behind the last batch.
func (w *accessWriter) writeNow(p []byte) (int, error) {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	n, err := w.dst.Write(p)
	if err != nil {
		w.dropped.Add(1)
	}
	return n, err
}

// report warns of the lines dropped since the last warning: when the
// destination took a batch again (at most every accessReportEvery), and at
// close.
func (w *accessWriter) report(closing bool) {
	w.mu.Lock()
	n, err := w.unreported, w.lastErr
	if n == 0 || !closing && time.Since(w.reported) < accessReportEvery {
		w.mu.Unlock()
		return
	}
	w.unreported, w.lastErr, w.reported = 0, nil, time.Now()
	w.mu.Unlock()
	args := []any{"dropped", n, "dropped_total", w.dropped.Load()}
	if err != nil {
		args = append(args, "err", err)
	}
	w.log.Warn("access log lines dropped: the destination did not take them", args...)
}

func (w *accessWriter) close(ctx context.Context) error {
	w.mu.Lock()
	if !w.started {
		w.closed = true // nothing waits, and no run to stop
		w.mu.Unlock()
		return nil
	}
	w.mu.Unlock()
	w.stop.Do(func() { close(w.done) })
	select {
	case <-w.stopped:
		return nil
	case <-ctx.Done():
		w.mu.Lock()
		n := w.writing + bytes.Count(w.pending, newline)
		w.mu.Unlock()
		return fmt.Errorf("access log: %d lines not written, the destination did not take them: %w", n, ctx.Err())
	}
}
