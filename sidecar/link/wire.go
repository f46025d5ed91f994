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
//	X <reason>                          Attach → Link: the daemon is gone; give up
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
	"strconv"
	"sync"

	"talaria/sidecar/protocol"
)

// Hello is the first word of the hello lines.
const Hello = "talaria-link"

// wireVersion is the hello's version field.
const wireVersion = "1"

// maxWireLine bounds one wire line: a protocol line and its header.
const maxWireLine = protocol.MaxLineBytes + 64

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
// detached).
type peer struct {
	mu      sync.Mutex
	rmu     sync.Mutex // held while an item is taken (two connections may read at once)
	out     []item
	kept    int    // the bytes of out
	next    uint64 // the last seq given to an item sent
	in      uint64 // the last seq received and taken
	acked   uint64 // the last seq this side acknowledged on the current connection
	w       io.Writer
	onBreak func(w io.Writer) // a write to w failed
}

// send keeps an item and writes it when attached. A failed write detaches and calls
// onBreak; the item stays kept.
func (p *peer) send(kind byte, data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	it := item{seq: p.next, kind: kind, data: bytes.Clone(data)}
	p.out = append(p.out, it)
	p.kept += len(it.data)
	p.writeLocked(it.appendTo(nil))
}

// writeLocked writes b to the current connection, if any.
func (p *peer) writeLocked(b []byte) {
	if p.w == nil {
		return
	}
	if _, err := p.w.Write(b); err != nil {
		w := p.w
		p.w = nil
		if p.onBreak != nil {
			go p.onBreak(w)
		}
	}
}

// unsequenced writes a line that is not kept (A, L) when attached.
func (p *peer) unsequenced(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writeLocked([]byte(line + "\n"))
}

// attach makes w the current connection: prefix (a hello) is written first, then every
// kept item after theirLast, in order. Items up to theirLast are dropped.
func (p *peer) attach(w io.Writer, prefix string, theirLast uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLocked(theirLast)
	var b []byte
	b = append(b, prefix...)
	for _, it := range p.out {
		b = it.appendTo(b)
	}
	p.w, p.acked = w, 0
	p.writeLocked(b)
}

// detach forgets w when it is the current connection.
func (p *peer) detach(w io.Writer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.w == w {
		p.w = nil
	}
}

func (p *peer) dropLocked(upTo uint64) {
	i := 0
	for i < len(p.out) && p.out[i].seq <= upTo {
		p.kept -= len(p.out[i].data)
		i++
	}
	p.out = append(p.out[:0], p.out[i:]...)
}

// keptBytes is the size of the items kept for the other side; attached reports
// whether a connection is current.
func (p *peer) keptBytes() (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.kept, p.w != nil
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

// ack writes "A <last>" when something arrived since the last acknowledgement.
func (p *peer) ack() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.in > p.acked {
		p.acked = p.in
		p.writeLocked([]byte("A " + strconv.FormatUint(p.in, 10) + "\n"))
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
		return fmt.Errorf("link: item %d came after %d: the stream has a gap", seq, in)
	}
	if err := take(kind, data); err != nil {
		return err
	}
	p.mu.Lock()
	p.in = seq
	p.mu.Unlock()
	return nil
}
