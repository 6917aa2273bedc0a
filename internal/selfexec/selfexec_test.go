package selfexec

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

const childEnv = "OPM_SELFEXEC_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Stdout.WriteString("child ran\n")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCombinedOutputSurvivesConcurrentForks copies the binary while other
// goroutines fork children, the situation that made a copied binary fail
// with "text file busy", and checks that every run starts.
func TestCombinedOutputSurvivesConcurrentForks(t *testing.T) {
	dir := t.TempDir()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					_ = exec.Command("true").Run()
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	for i := range 20 {
		bin, err := Copy(dir, "child"+strings.Repeat("x", i))
		if err != nil {
			t.Fatal(err)
		}
		out, err := CombinedOutput(func() *exec.Cmd {
			cmd := exec.Command(bin)
			cmd.Env = []string{childEnv + "=1"}
			return cmd
		})
		if err != nil || strings.TrimSpace(string(out)) != "child ran" {
			t.Fatalf("run %d: %v\n%s", i, err, out)
		}
	}
}
