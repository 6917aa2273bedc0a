package main

import (
	"fmt"
	"io"
	"sync"
)

// progress shows "pulled 12/181" on one terminal line while work runs. A
// nil *progress does nothing, so callers need not check for a terminal.
type progress struct {
	w     io.Writer
	verb  string
	total int

	mu      sync.Mutex
	n       int
	printed bool
}

func newProgress(w io.Writer, verb string, total int) *progress {
	return &progress{w: w, verb: verb, total: total}
}

// step counts one item done and redraws the line.
func (p *progress) step() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	fmt.Fprintf(p.w, "\r\033[K%s %d/%d", p.verb, p.n, p.total)
	p.printed = true
}

// finish erases the line, so the report starts on a clean one.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.printed {
		fmt.Fprint(p.w, "\r\033[K")
		p.printed = false
	}
}
