// Package link keeps a sidecar's protocol stream whole across a dropped connection.
//
// A sidecar on another machine runs there as a daemon (Daemon) that outlives the ssh
// connection which reached it. Each connection runs Attach there, which joins the ssh
// channel's stdio to the daemon's Unix socket. On this machine, Link runs the ssh
// command, speaks docs/protocol.md's lines on its own stdin/stdout to the supervisor as
// a local sidecar would, and runs ssh again when the connection drops. A turn running
// there goes on while the connection is down; what either side wrote meanwhile is sent
// again after the reconnect, and nothing twice.
//
// The wire between Link and Daemon: newline-terminated lines, each a letter, then
// space-separated fields.
//
//	talaria-link 1 <id> <last> <fresh>  Link → Daemon: hello; id names the daemon,
//	                                    last is the last seq Link received, fresh is 1
//	                                    when a missing daemon may be started
//	talaria-link 1 <last>               Daemon → Link: the last seq Daemon received
//	talaria-link-gone <reason>          Attach or Daemon → Link: the daemon is gone
//	                                    (or cannot serve this link); give up
//	D <seq> <line>                      one protocol line (seq 1, 2, ... per direction)
//	C <seq>                             Link → Daemon: the host closed the sidecar's stdin
//	E <seq> <code>                      Daemon → Link: the sidecar exited with code
//	A <seq>                             every item up to seq arrived; the sender drops them
//	L <text>                            Daemon → Link: a line of the sidecar's stderr
//
// Items (D, C, E) are kept by their sender until acknowledged and sent again, in order,
// after each hello; a receiver takes an item only when its seq is one past the last it
// took.
package link

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync"
	"time"

	"talaria/sidecar/protocol"
)

// Hello is the first word of the hello lines; Gone the first word of the line saying
// the daemon is gone (long words: a login script's output is not taken for them).
const (
	Hello = "talaria-link"
	Gone  = "talaria-link-gone"
)

// wireVersion is the hello's version field.
const wireVersion = "1"

// maxWireLine bounds one wire line: a protocol line and its header.
const maxWireLine = protocol.MaxLineBytes + 64

// errGap is a receiver's error for an item past the next one: the other side is not
// the one this side spoke to (another daemon with the same id, or one restarted), so
// the stream cannot be made whole.
var errGap = errors.New("link: the stream has a gap")

// ErrLineTooLong is returned for a wire line over maxWireLine bytes.
var ErrLineTooLong = errors.New("link: a line is longer than the protocol allows")

// readLine returns the next line of br without its newline. Errors: io.EOF (a final
// line without a newline is returned with io.EOF), ErrLineTooLong, read errors.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > maxWireLine {
			return nil, ErrLineTooLong
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return buf, err
		}
	}
}

// item is a sequenced line kept until the other side acknowledges it.
type item struct {
	seq  uint64
	kind byte // 'D', 'C' or 'E'
	data []byte
}

func (it item) appendTo(b []byte) []byte {
	b = append(b, it.kind, ' ')
	b = strconv.AppendUint(b, it.seq, 10)
	if it.kind != 'C' {
		b = append(b, ' ')
		b = append(b, it.data...)
	}
	return append(b, '\n')
}

// peer is one side's half of the stream: the items it sent and not yet saw
// acknowledged, the last seq it received, and the connection it writes to now (nil while
// detached). No write to a connection happens under mu: a writer goroutine per
// connection (conn.run) takes what is due and writes it, so a connection whose other
// end does not read now never stops this side from reading (and so acknowledging).
type peer struct {
	mu      sync.Mutex
	rmu     sync.Mutex // held while an item is taken (two connections may read at once)
	out     []item
	kept    int    // the bytes of out
	next    uint64 // the last seq given to an item sent
	in      uint64 // the last seq received and taken
	acked   uint64 // the last seq this side acknowledged on the current connection
	conn    *conn
	onBreak func(w io.Writer) // a write to w failed
	// changed is broadcast (under mu) whenever what waiters look at may have changed:
	// items dropped by an acknowledgement, a connection attached or detached, a
	// writer's batch written. Lazily made by cond.
	changed *sync.Cond
}

// cond returns p's condition variable over mu. Call with mu held.
func (p *peer) cond() *sync.Cond {
	if p.changed == nil {
		p.changed = sync.NewCond(&p.mu)
	}
	return p.changed
}

// waitUntil blocks until ok (called with mu held) is true or until stop is closed;
// it reports whether ok became true.
func (p *peer) waitUntil(ok func() bool, stop <-chan struct{}) bool {
	stopped := false
	if stop != nil {
		quit := make(chan struct{})
		defer close(quit)
		go func() {
			select {
			case <-stop:
				p.mu.Lock()
				stopped = true
				p.cond().Broadcast()
				p.mu.Unlock()
			case <-quit:
			}
		}()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for !ok() && !stopped {
		p.cond().Wait()
	}
	return ok()
}

// conn is the current connection's writer state.
type conn struct {
	w      io.Writer
	sent   uint64   // items up to this seq were written (or were acknowledged before)
	ctl    [][]byte // unsequenced lines due (the hello, A, L), written before items
	wake   chan struct{}
	done   chan struct{}
	exited chan struct{} // closed when its writer returned
}

// maxCtl bounds the unsequenced lines waiting on a slow connection (L lines beyond
// are dropped; an A is never needed twice).
const maxCtl = 1024

// maxBatch is about how much one write carries.
const maxBatch = 256 << 10

func (c *conn) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// send keeps an item; the current connection's writer sends it.
func (p *peer) send(kind byte, data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	it := item{seq: p.next, kind: kind, data: bytes.Clone(data)}
	p.out = append(p.out, it)
	p.kept += len(it.data)
	if p.conn != nil {
		p.conn.poke()
	}
}

// unsequenced queues a line that is not kept (A, L) when attached.
func (p *peer) unsequenced(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queueLocked([]byte(line + "\n"))
}

func (p *peer) queueLocked(b []byte) {
	if p.conn == nil || len(p.conn.ctl) >= maxCtl {
		return
	}
	p.conn.ctl = append(p.conn.ctl, b)
	p.conn.poke()
}

// attach makes w the current connection: prefix (a hello) is written first, then every
// kept item after theirLast, in order, then what is sent later. Items up to theirLast
// are dropped (theirLast past what was sent counts as all of it).
func (p *peer) attach(w io.Writer, prefix string, theirLast uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	theirLast = min(theirLast, p.next)
	p.dropLocked(theirLast)
	if p.conn != nil {
		close(p.conn.done)
	}
	c := &conn{w: w, sent: theirLast, wake: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
	if prefix != "" {
		c.ctl = append(c.ctl, []byte(prefix))
	}
	p.conn, p.acked = c, 0
	c.poke()
	p.cond().Broadcast()
	go p.write(c)
}

// write is c's writer: it writes what is due until c is detached or a write fails
// (then c is detached and onBreak called).
func (p *peer) write(c *conn) {
	defer close(c.exited)
	var buf []byte
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		for {
			p.mu.Lock()
			if p.conn != c {
				p.mu.Unlock()
				return
			}
			buf = buf[:0]
			for _, b := range c.ctl {
				buf = append(buf, b...)
			}
			c.ctl = c.ctl[:0]
			// The items are in seq order: start at the first one not yet written.
			for i := sort.Search(len(p.out), func(i int) bool { return p.out[i].seq > c.sent }); i < len(p.out) && len(buf) < maxBatch; i++ {
				buf = p.out[i].appendTo(buf)
				c.sent = p.out[i].seq
			}
			if len(buf) == 0 {
				p.cond().Broadcast() // all that was due is written
				p.mu.Unlock()
				break
			}
			p.mu.Unlock()
			if _, err := c.w.Write(buf); err != nil {
				p.detach(c.w)
				if p.onBreak != nil {
					p.onBreak(c.w)
				}
				return
			}
		}
	}
}

// finish writes what is due to w, then detaches it: the last acknowledgement reaches
// the other side before the connection is closed. It waits at most wait for the writer.
func (p *peer) finish(w io.Writer, wait time.Duration) {
	p.mu.Lock()
	c := p.conn
	if c == nil || c.w != w {
		p.mu.Unlock()
		return
	}
	c.poke()
	p.mu.Unlock()
	timeout := make(chan struct{})
	t := time.AfterFunc(wait, func() { close(timeout) })
	defer t.Stop()
	p.waitUntil(func() bool {
		return p.conn != c || len(c.ctl) == 0 && (len(p.out) == 0 || p.out[len(p.out)-1].seq <= c.sent)
	}, timeout)
	p.detach(w)
	select {
	case <-c.exited:
	case <-timeout:
	}
}

// detach forgets w when it is the current connection.
func (p *peer) detach(w io.Writer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil && p.conn.w == w {
		close(p.conn.done)
		p.conn = nil
		p.cond().Broadcast()
	}
}

func (p *peer) dropLocked(upTo uint64) {
	i := 0
	for i < len(p.out) && p.out[i].seq <= upTo {
		p.kept -= len(p.out[i].data)
		i++
	}
	p.out = append(p.out[:0], p.out[i:]...)
	if i > 0 {
		p.cond().Broadcast()
	}
}

// waitKept blocks while more than limit bytes are kept and no connection is current,
// or until stop is closed.
func (p *peer) waitKept(limit int, stop <-chan struct{}) {
	p.waitUntil(func() bool { return p.kept <= limit || p.conn != nil }, stop)
}

// lastIn is the last seq taken.
func (p *peer) lastIn() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.in
}

// pending is how many items wait for an acknowledgement.
func (p *peer) pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.out)
}

// ack queues "A <last>" when something arrived since the last acknowledgement.
func (p *peer) ack() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.in > p.acked && p.conn != nil {
		p.acked = p.in
		p.queueLocked([]byte("A " + strconv.FormatUint(p.in, 10) + "\n"))
	}
}

// receive handles one wire line: an acknowledgement drops kept items; an item in
// sequence goes to take (kind, payload); an item seen before is ignored; anything else
// (L included) goes to other. Errors: a malformed line, an item out of sequence (a seq
// skipped: the stream cannot be made whole), or take's error.
func (p *peer) receive(line []byte, take func(kind byte, data []byte) error, other func(line []byte) error) error {
	if len(line) < 2 || line[1] != ' ' {
		return other(line)
	}
	kind := line[0]
	switch kind {
	case 'A', 'D', 'C', 'E':
	default:
		return other(line)
	}
	rest := line[2:]
	num, data, _ := bytes.Cut(rest, []byte{' '})
	seq, err := strconv.ParseUint(string(num), 10, 64)
	if err != nil {
		return fmt.Errorf("link: malformed line %.40q", line)
	}
	if kind == 'A' {
		p.mu.Lock()
		p.dropLocked(seq)
		p.mu.Unlock()
		return nil
	}
	p.rmu.Lock()
	defer p.rmu.Unlock()
	p.mu.Lock()
	in := p.in
	p.mu.Unlock()
	switch {
	case seq <= in:
		return nil
	case seq > in+1:
		return fmt.Errorf("%w: item %d came after %d", errGap, seq, in)
	}
	if err := take(kind, data); err != nil {
		return err
	}
	p.mu.Lock()
	p.in = seq
	p.mu.Unlock()
	return nil
}
