// Command harness records catalogd's HTTP answers for opm's replay test
// (internal/httpcatalog/catalogd_test.go). It is built inside a work tree
// of operator-controller, whose internal packages it imports; see
// ../README.md. It is opm's code, not catalogd's: it only drives catalogd's
// storage, its HTTP handlers and the compression middleware catalogd wraps
// them in, as catalogd's main does.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/zstd"

	"github.com/operator-framework/operator-controller/internal/catalogd/storage"
)

type request struct {
	Name   string            `json:"name"`
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Header map[string]string `json:"header,omitempty"`
	Body   string            `json:"body,omitempty"`
	// BodyRepeat, when set, sends Body repeated this many times between
	// BodyPrefix and BodySuffix (large bodies).
	BodyRepeat int    `json:"bodyRepeat,omitempty"`
	BodyPrefix string `json:"bodyPrefix,omitempty"`
	BodySuffix string `json:"bodySuffix,omitempty"`
	// Opm, in the hostile table, is the GraphQL error opm answers where
	// it refuses a document catalogd answers otherwise (or not at all);
	// the harness only carries it.
	Opm string `json:"opm,omitempty"`
}

type response struct {
	Status int               `json:"status"`
	Header map[string]string `json:"header"`
	// Body is the decoded body when at most maxBody bytes and not JSON
	// lines (catalog content, checked by digest); else only its digest.
	Body       *string `json:"body,omitempty"`
	BodySHA256 string  `json:"bodySHA256"`
	BodyLen    int     `json:"bodyLen"`
	// Failure, with -isolate, is what became of catalogd's process when
	// the request got no answer (it died, or was killed after -timeout).
	Failure string `json:"failure,omitempty"`
}

type answer struct {
	request
	Response response `json:"response"`
}

const maxBody = 64 << 10

func main() {
	catalog := flag.String("catalog", "", "catalog directory or single FBC file")
	name := flag.String("name", "test-catalog", "ClusterCatalog name to store it under")
	reqs := flag.String("requests", "", "JSON file: a list of requests")
	out := flag.String("out", "", "answers file to write")
	isolate := flag.Bool("isolate", false, "serve from a child process, restarted after a request it does not answer (a crash is recorded, not shared)")
	timeout := flag.Duration("timeout", 30*time.Second, "with -isolate, how long a request may take before the child is killed")
	child := flag.Bool("child", false, "internal: serve and print the URL (for -isolate)")
	flag.Parse()

	var rs []request
	b, err := os.ReadFile(*reqs)
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(b, &rs); err != nil {
		log.Fatal(err)
	}
	dir := *catalog
	if st, err := os.Stat(dir); err != nil {
		log.Fatal(err)
	} else if !st.IsDir() {
		tmp, err := os.MkdirTemp("", "harness-fbc-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		data, err := os.ReadFile(dir)
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, filepath.Base(dir)), data, 0o600); err != nil {
			log.Fatal(err)
		}
		dir = tmp
	}
	root, err := os.MkdirTemp("", "harness-store-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	base, _ := url.Parse("http://localhost/catalogs/")
	st := storage.NewLocalDirV1(root, base, storage.MetasHandlerEnabled, storage.GraphQLQueriesEnabled)
	if err := st.Store(context.Background(), *name, os.DirFS(dir)); err != nil {
		log.Fatal(err)
	}
	// What catalogd's serverutil wraps its storage handler in (metrics and
	// logging aside).
	srv := httptest.NewServer(gzhttp.GzipHandler(st.StorageServerHandler()))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	if *child {
		fmt.Println(srv.URL)
		select {}
	}
	serverURL := srv.URL
	var kid *childServer
	if *isolate {
		srv.Close()
		client.Timeout = *timeout
		kid = startChild(os.Args[1:])
		serverURL = kid.url
	}

	var answers []answer
	for _, r := range rs {
		body := r.Body
		if r.BodyRepeat > 0 {
			body = r.BodyPrefix + strings.Repeat(body, r.BodyRepeat) + r.BodySuffix
		}
		req, err := http.NewRequest(r.Method, serverURL+r.Path, strings.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		for k, v := range r.Header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil && kid != nil {
			answers = append(answers, answer{request: r, Response: response{Failure: kid.failure(err)}})
			log.Printf("%s: %s", r.Name, answers[len(answers)-1].Response.Failure)
			kid = startChild(os.Args[1:])
			serverURL = kid.url
			continue
		}
		if err != nil {
			log.Fatalf("%s: %v", r.Name, err)
		}
		raw, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			log.Fatalf("%s: %v", r.Name, err)
		}
		decoded, err := decode(resp.Header.Get("Content-Encoding"), raw)
		if err != nil {
			log.Fatalf("%s: %v", r.Name, err)
		}
		h := map[string]string{}
		for k, v := range resp.Header {
			switch k {
			case "Date":
				continue
			case "Last-Modified":
				h[k] = "<set>"
				continue
			case "Content-Length":
				if resp.Header.Get("Content-Encoding") != "" {
					h[k] = "<compressed>"
					continue
				}
			}
			h[k] = strings.Join(v, ", ")
		}
		sum := sha256.Sum256(decoded)
		a := answer{request: r, Response: response{Status: resp.StatusCode, Header: h, BodySHA256: hex.EncodeToString(sum[:]), BodyLen: len(decoded)}}
		if len(decoded) <= maxBody && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/jsonl") {
			s := string(decoded)
			a.Response.Body = &s
		}
		answers = append(answers, a)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(answers); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "%d answers from catalogd written to %s\n", len(answers), *out)
}

// childServer is catalogd's storage served by a child process (-child).
type childServer struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer
}

func startChild(args []string) *childServer {
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command(self, append([]string{"-child"}, args...)...)
	c := &childServer{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		log.Fatalf("child: %v: %s", err, c.stderr)
	}
	c.url = strings.TrimSpace(line)
	return c
}

// failure says what the request's error and the child's fate were; the
// child is gone afterwards.
func (c *childServer) failure(reqErr error) string {
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	var fate string
	select {
	case err := <-exited:
		fate = fmt.Sprintf("the process exited (%v)", err)
		var fatal, runtime string
		for _, l := range strings.Split(c.stderr.String(), "\n") {
			switch {
			case fatal == "" && (strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:")):
				fatal = l
			case runtime == "" && strings.HasPrefix(l, "runtime: goroutine"):
				runtime = l
			}
		}
		for _, l := range []string{fatal, runtime} {
			if l != "" {
				fate += ": " + l
			}
		}
	case <-time.After(2 * time.Second):
		_ = c.cmd.Process.Kill()
		<-exited
		fate = "the process was still running and was killed"
	}
	kind := "the connection failed"
	var ne net.Error
	if errors.As(reqErr, &ne) && ne.Timeout() {
		kind = "no answer within the timeout"
	}
	return kind + "; " + fate
}

// decode undoes the Content-Encoding catalogd chose.
func decode(enc string, b []byte) ([]byte, error) {
	switch enc {
	case "":
		return b, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		return io.ReadAll(zr)
	}
	return nil, fmt.Errorf("unknown Content-Encoding %q", enc)
}
