package index_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// stallingRegistry answers the registry ping and then holds every other
// request open until the client gives up, announcing the first one: a
// registry that hangs mid-pull.
func stallingRegistry(t *testing.T) (addr string, stalled <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			w.WriteHeader(http.StatusOK)
			return
		}
		once.Do(func() { close(ch) })
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), ch
}

// TestSignalDuringIndexAdd stops a real opm process with SIGINT or SIGTERM
// while it waits on a stalled registry: it must exit 130 or 143, print one
// line, leave no temporary file and write nothing to the destination.
func TestSignalDuringIndexAdd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		code int
		args func(reg, dir string) []string
		dest string
	}{
		{"SIGINT database", syscall.SIGINT, exit.Interrupted,
			func(reg, dir string) []string {
				return []string{"registry", "add", "--use-http", "-d", filepath.Join(dir, "index.db"), "-b", reg + "/op-bundle:1," + reg + "/op-bundle:2"}
			}, "index.db"},
		{"SIGTERM image", syscall.SIGTERM, exit.Terminated,
			func(reg, dir string) []string {
				return []string{"index", "add", "--use-http", "-b", validBundle, "-f", reg + "/idx:1", "-t", "oci:" + filepath.Join(dir, "layout") + ":2"}
			}, "layout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg, stalled := stallingRegistry(t)
			o := cmdtest.New(t)
			work, tmp := t.TempDir(), t.TempDir()
			o.Dir = work
			o.ProcEnv["TMPDIR"] = tmp
			bundle, err := filepath.Abs(validBundle)
			require.NoError(t, err)
			args := tc.args(reg, work)
			for i, a := range args {
				if a == validBundle {
					args[i] = bundle
				}
			}
			cmd := o.Command(args...)
			var out, errOut strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errOut
			require.NoError(t, cmd.Start())
			select {
			case <-stalled:
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("opm never reached the registry; stderr: %s", errOut.String())
			}
			require.NoError(t, cmd.Process.Signal(tc.sig))
			err = cmd.Wait()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "opm exited by itself after the signal: %v", err)
			assert.Equal(t, tc.code, ee.ExitCode(), errOut.String())
			assert.Equal(t, "error: interrupted; nothing was written\n", errOut.String(), "one line, not one per cancelled request")
			assert.Empty(t, out.String())
			_, err = os.Stat(filepath.Join(work, tc.dest))
			assert.True(t, os.IsNotExist(err), "the destination %s was not written", tc.dest)
			assert.Empty(t, dirEntries(t, tmp), "no temporary files are left")
		})
	}
}
