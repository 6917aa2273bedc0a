package iostreams

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Progress shows "pulled 12/181" on one terminal line while work runs. A
// nil *Progress does nothing, so callers need not check for a terminal.
type Progress struct {
	w     io.Writer
	verb  string
	total int

	mu      sync.Mutex
	n       int
	detail  func() string
	printed bool
}

// NewProgress counts total items, each done one being verb ("pulled"). A
// total of 0 means unknown: the line shows the count alone.
func NewProgress(w io.Writer, verb string, total int) *Progress {
	return &Progress{w: w, verb: verb, total: total}
}

// SetDetail adds detail() after the count on each redraw ("pulled 3/10,
// 12.5 MiB"); an empty detail adds nothing.
func (p *Progress) SetDetail(detail func() string) *Progress {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.detail = detail
	return p
}

// Step counts one item done and redraws the line.
func (p *Progress) Step() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	line := fmt.Sprintf("%s %d", p.verb, p.n)
	if p.total > 0 {
		line += fmt.Sprintf("/%d", p.total)
	}
	if p.detail != nil {
		if d := p.detail(); d != "" {
			line += ", " + d
		}
	}
	p.draw(line)
}

// Show replaces the line with text: a phase that has no count, such as a
// push.
func (p *Progress) Show(text string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw(text)
}

// Tick shows text() now and then every interval, until stop is called;
// stop shows it a last time, so the final figure is what remains until
// Finish.
func (p *Progress) Tick(every time.Duration, text func() string) (stop func()) {
	if p == nil {
		return func() {}
	}
	p.Show(text())
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.Show(text())
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			p.Show(text())
		})
	}
}

func (p *Progress) draw(line string) {
	fmt.Fprintf(p.w, "\r\033[K%s", line)
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
