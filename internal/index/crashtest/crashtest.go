// Package crashtest makes, for tests, what a writer killed in the middle of
// a transaction leaves behind: a database whose file holds some pages of a
// write that never committed, beside the hot journal that undoes them.
package crashtest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Writer is a sqlite3 process in the middle of a write transaction.
type Writer struct {
	cmd *exec.Cmd
}

// StartWriter runs stmts on the database at path in a transaction of the
// sqlite3 command-line tool that never commits, with a one-page cache so
// that the changed pages spill into the file itself. It returns once the
// statements have run; Kill ends the writer as a crash would.
func StartWriter(t testing.TB, path, stmts string) *Writer {
	t.Helper()
	if _, err := exec.LookPath("sqlite3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the sqlite3 command-line tool is required under CI (apt-get install sqlite3): it makes the killed writer")
		}
		t.Skip("sqlite3 command-line tool not installed (apt-get install sqlite3): cannot make a killed writer")
	}
	cmd := exec.Command("sqlite3", path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &Writer{cmd: cmd}
	t.Cleanup(w.Kill)
	script := "PRAGMA cache_size = 1;\nBEGIN IMMEDIATE;\n" + stmts + "\n.print WRITTEN\n"
	if _, err := in.Write([]byte(script)); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "WRITTEN" {
			return w
		}
	}
	w.Kill()
	t.Fatalf("sqlite3 writer ended before writing: %s", stderr.String())
	return nil
}

// Kill ends the writer with SIGKILL: no rollback, no cleanup.
func (w *Writer) Kill() {
	if w.cmd.ProcessState != nil {
		return
	}
	_ = w.cmd.Process.Kill()
	_ = w.cmd.Wait()
}

// KilledWriter is StartWriter then Kill: it leaves path with a hot journal.
// It fails the test unless the uncommitted write reached the file (else
// there would be nothing to roll back).
func KilledWriter(t testing.TB, path, stmts string) {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	StartWriter(t, path, stmts).Kill()
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(before, after) {
		t.Fatal("the killed writer changed nothing in the file: no uncommitted pages to serve")
	}
	if _, err := os.Stat(path + "-journal"); err != nil {
		t.Fatalf("the killed writer left no journal: %v", err)
	}
}
