package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// seededDB is a database holding etcd, and its bytes.
func seededDB(t *testing.T) (*DB, string, string) {
	t.Helper()
	needShared(t)
	db, path := newDB(t)
	if _, err := db.Add(context.Background(), corpusBundles(t, "etcd"), AddOptions{}); err != nil {
		t.Fatal(err)
	}
	return db, path, fileBytes(t, path)
}

func assertUnchanged(t *testing.T, path, before string) {
	t.Helper()
	if fileBytes(t, path) != before {
		t.Error("the database file changed")
	}
	assertOnlyFiles(t, filepath.Dir(path), filepath.Base(path))
}

func TestFaultInjectedErrorMidAdd(t *testing.T) {
	for _, stage := range []string{"bundle:skupper-operator.v1.8.0", "bundle:skupper-operator.v1.9.6", "commit"} {
		t.Run(stage, func(t *testing.T) {
			db, path, before := seededDB(t)
			injected := errors.New("injected failure")
			_, err := db.Add(context.Background(), corpusBundles(t, "skupper-operator"), AddOptions{
				Permissive: true, // a database failure is fatal even with --permissive
				hook: func(s string) error {
					if s == stage {
						return injected
					}
					return nil
				}})
			if !errors.Is(err, injected) {
				t.Fatalf("got %v", err)
			}
			assertUnchanged(t, path, before)
			// The handle stays usable.
			if _, err := db.Add(context.Background(), corpusBundles(t, "skupper-operator"), AddOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestBadBundleLastInBatch(t *testing.T) {
	db, path, before := seededDB(t)
	lbs := append(corpusBundles(t, "ibmcloud-operator"), spec{pkg: "ibmcloud-operator", version: "99.0.0", replaces: "ibmcloud-operator.v0.0.0-missing"}.load(t))
	_, err := db.Add(context.Background(), lbs, AddOptions{})
	if !errors.Is(err, ErrReplacesMissing) {
		t.Fatalf("got %v", err)
	}
	assertUnchanged(t, path, before)
}

func TestReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: directory permissions do not stop root, so a read-only directory cannot be simulated")
	}
	db, path, before := seededDB(t)
	dir := filepath.Dir(path)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	_, err := db.Add(context.Background(), corpusBundles(t, "skupper-operator"), AddOptions{})
	if err == nil {
		t.Fatal("add in a read-only directory succeeded")
	}
	t.Logf("error: %v", err)
	os.Chmod(dir, 0o755)
	assertUnchanged(t, path, before)
}

// Child processes for the kill and disk-full tests.
const childEnv = "OPM_INDEX_TEST_CHILD"

func TestChildProcess(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("helper process for the kill and disk-full tests")
	}
	path := os.Getenv("OPM_INDEX_TEST_DB")
	db, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	opts := AddOptions{}
	switch mode {
	case "kill":
		ready := os.Getenv("OPM_INDEX_TEST_READY")
		opts.hook = func(s string) error {
			if s == "bundle:skupper-operator.v1.9.0" {
				os.WriteFile(ready, nil, 0o644)
				time.Sleep(time.Minute)
			}
			return nil
		}
	case "diskfull":
		signal.Ignore(syscall.SIGXFSZ)
		limit, _ := strconv.ParseUint(os.Getenv("OPM_INDEX_TEST_LIMIT"), 10, 64)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(5)
		}
	}
	var lbs []LoadedBundle
	for _, pkg := range []string{"skupper-operator", "aqua", "ibmcloud-operator"} {
		lbs = append(lbs, corpusBundles(t, pkg)...)
	}
	_, err = db.Add(context.Background(), lbs, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "add failed:", err)
		os.Exit(3)
	}
	os.Exit(0)
}

func childCmd(t *testing.T, mode, path string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), append([]string{childEnv + "=" + mode, "OPM_INDEX_TEST_DB=" + path}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

// recovered opens the database after a crash (sqlite rolls a hot journal
// back on open) and closes it again.
func recovered(t *testing.T, path string) {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Inspect(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Close()
}

func TestKillMidAdd(t *testing.T) {
	db, path, before := seededDB(t)
	db.Close()
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := childCmd(t, "kill", path, "OPM_INDEX_TEST_READY="+ready)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("child never reached the hook")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		t.Logf("after kill: %s", e.Name())
	}
	recovered(t, path)
	assertUnchanged(t, path, before)
}

func TestDiskFullMidAdd(t *testing.T) {
	db, path, before := seededDB(t)
	db.Close()
	st, _ := os.Stat(path)
	limit := st.Size() + 256<<10 // room for a little, not for three packages
	cmd := childCmd(t, "diskfull", path, "OPM_INDEX_TEST_LIMIT="+strconv.FormatInt(limit, 10))
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("child: %v; want exit 3 (add failed)", err)
	}
	recovered(t, path)
	assertUnchanged(t, path, before)
}
