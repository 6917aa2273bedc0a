package iostreams

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestColorEnabled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		tty  bool
		want bool
	}{
		{"terminal", map[string]string{"TERM": "xterm"}, true, true},
		{"not a terminal", map[string]string{"TERM": "xterm"}, false, false},
		{"NO_COLOR", map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, true, false},
		{"empty NO_COLOR", map[string]string{"TERM": "xterm", "NO_COLOR": ""}, true, true},
		{"dumb terminal", map[string]string{"TERM": "dumb"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, _, _ := Test()
			s.LookupEnv = func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			assert.Equal(t, tc.want, s.ColorEnabled(tc.tty))
		})
	}
}

func TestThemeAndProgress(t *testing.T) {
	t.Parallel()
	s, _, _, errOut := Test()
	assert.Equal(t, "error:", s.ErrTheme().ErrorPrefix(), "no colour off a terminal")
	s.ErrTTY = true
	s.LookupEnv = func(k string) (string, bool) { return map[string]string{"TERM": "xterm"}[k], k == "TERM" }
	assert.Contains(t, s.ErrTheme().NotePrefix(), "\x1b[", "colour on a terminal")

	var none *Progress
	none.Step() // a nil progress does nothing
	none.Finish()
	p := NewProgress(errOut, "pulled", 2)
	p.Step()
	p.Step()
	p.Finish()
	assert.Equal(t, "\r\x1b[Kpulled 1/2\r\x1b[Kpulled 2/2\r\x1b[K", errOut.String())
	assert.False(t, strings.Contains(errOut.String(), "\n"))
}

func TestProgressDetailShowTick(t *testing.T) {
	t.Parallel()
	var none *Progress
	none.SetDetail(func() string { return "x" }).Show("y")
	none.Tick(time.Millisecond, func() string { return "z" })()

	var buf bytes.Buffer
	bytesIn := "0 B"
	p := NewProgress(&buf, "pulled", 0).SetDetail(func() string { return bytesIn })
	p.Step()
	bytesIn = ""
	p.Step()
	assert.Equal(t, "\r\x1b[Kpulled 1, 0 B\r\x1b[Kpulled 2", buf.String(), "unknown total: the count alone; an empty detail adds nothing")

	buf.Reset()
	n := 0
	stop := p.Tick(time.Hour, func() string { n++; return fmt.Sprintf("pushing %d", n) })
	stop()
	stop()
	p.Finish()
	assert.Equal(t, "\r\x1b[Kpushing 1\r\x1b[Kpushing 2\r\x1b[K", buf.String(), "shown at the start and once more at stop")
}

// TestPlainProgress: off a terminal, progress is whole lines without
// control sequences, at most one per interval by the clock; a run shorter
// than the interval prints nothing, and Finish ends a printed log with the
// final figure.
func TestPlainProgress(t *testing.T) {
	t.Parallel()
	clock := time.Unix(0, 0)
	now := func() time.Time { return clock }
	var buf bytes.Buffer
	mib := 0
	p := NewPlainProgress(&buf, "pulled", 181, 5*time.Second, now).SetDetail(func() string { return fmt.Sprintf("%d MiB", mib) })
	p.Step()
	clock = clock.Add(4 * time.Second)
	p.Step()
	assert.Empty(t, buf.String(), "nothing before the first interval")
	clock = clock.Add(time.Second)
	mib = 12
	p.Step()
	assert.Equal(t, "pulled 3/181, 12 MiB\n", buf.String())
	for range 37 {
		clock = clock.Add(100 * time.Millisecond)
		p.Step()
	}
	assert.Equal(t, "pulled 3/181, 12 MiB\n", buf.String(), "at most one line per interval")
	clock = clock.Add(2 * time.Second)
	p.Step()
	assert.Equal(t, "pulled 3/181, 12 MiB\npulled 41/181, 12 MiB\n", buf.String())
	p.Step()
	p.Finish()
	assert.Equal(t, "pulled 3/181, 12 MiB\npulled 41/181, 12 MiB\npulled 42/181, 12 MiB\n", buf.String(), "Finish writes the last state")
	assert.NotContains(t, buf.String(), "\x1b")
	assert.NotContains(t, buf.String(), "\r")

	buf.Reset()
	short := NewPlainProgress(&buf, "pulled", 2, 5*time.Second, now)
	short.Step()
	short.Step()
	short.Finish()
	assert.Empty(t, buf.String(), "a run shorter than the interval prints nothing")

	buf.Reset()
	shown := NewPlainProgress(&buf, "", 0, 5*time.Second, now)
	clock = clock.Add(5 * time.Second)
	shown.Show("pushing: 3 MiB sent")
	shown.Finish()
	assert.Equal(t, "pushing: 3 MiB sent\n", buf.String(), "nothing changed since the last line: Finish adds none")
}
