package iostreams

import (
	"fmt"
	"io"
	"sync"
)

// Progress shows "pulled 12/181" on one terminal line while work runs. A
// nil *Progress does nothing, so callers need not check for a terminal.
type Progress struct {
	w     io.Writer
	verb  string
	total int

	mu      sync.Mutex
	n       int
	printed bool
}

// NewProgress counts total items, each done one being verb ("pulled").
func NewProgress(w io.Writer, verb string, total int) *Progress {
	return &Progress{w: w, verb: verb, total: total}
}

// Step counts one item done and redraws the line.
func (p *Progress) Step() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	fmt.Fprintf(p.w, "\r\033[K%s %d/%d", p.verb, p.n, p.total)
	p.printed = true
}

// Finish erases the line, so the report starts on a clean one.
func (p *Progress) Finish() {
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
