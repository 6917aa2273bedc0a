// Command opm-resolve-harness records what OLM v0's resolver answers for
// each question in questions.json. It is opm's code, built inside a work
// tree of operator-lifecycle-manager (see ../README.md) because it drives
// OLM's internal packages: for every question it serves each catalog over
// the registry gRPC API (opm serve, or, with -server upstream, the
// operator-registry server OLM vendors, in process), puts the
// CatalogSources, Subscriptions, installed CSVs and one OperatorGroup into
// fake clients and listers, and calls the step resolver as the catalog
// operator builds it for CatalogSources with spec.address.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	opversion "github.com/operator-framework/api/pkg/lib/version"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-lifecycle-manager/pkg/api/client/clientset/versioned/fake"
	v1listers "github.com/operator-framework/operator-lifecycle-manager/pkg/api/client/listers/operators/v1"
	v1alpha1listers "github.com/operator-framework/operator-lifecycle-manager/pkg/api/client/listers/operators/v1alpha1"
	"github.com/operator-framework/operator-lifecycle-manager/pkg/controller/registry"
	"github.com/operator-framework/operator-lifecycle-manager/pkg/controller/registry/grpc"
	"github.com/operator-framework/operator-lifecycle-manager/pkg/controller/registry/resolver"
	resolvercache "github.com/operator-framework/operator-lifecycle-manager/pkg/controller/registry/resolver/cache"
	"github.com/operator-framework/operator-lifecycle-manager/pkg/controller/registry/resolver/projection"
	"github.com/operator-framework/operator-lifecycle-manager/pkg/lib/operatorlister"
	"github.com/operator-framework/operator-registry/pkg/api"
	regcache "github.com/operator-framework/operator-registry/pkg/cache"
	regclient "github.com/operator-framework/operator-registry/pkg/client"
	regserver "github.com/operator-framework/operator-registry/pkg/server"
	"github.com/sirupsen/logrus"
	ggrpc "google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// The question and answer files' shapes (internal/resolve's Question and
// Answer, catalogs carrying sources instead of content).
type gvk struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type question struct {
	Name            string `json:"name"`
	GlobalNamespace string `json:"globalNamespace"`
	Namespace       string `json:"namespace"`
	Catalogs        []struct {
		Name      string   `json:"name"`
		Namespace string   `json:"namespace"`
		Priority  int      `json:"priority"`
		Sources   []string `json:"sources"`
	} `json:"catalogs"`
	Subscriptions []struct {
		Name             string `json:"name"`
		Package          string `json:"package"`
		Channel          string `json:"channel"`
		StartingCSV      string `json:"startingCSV"`
		Catalog          string `json:"catalog"`
		CatalogNamespace string `json:"catalogNamespace"`
		InstalledCSV     string `json:"installedCSV"`
	} `json:"subscriptions"`
	Installed []struct {
		Package  string `json:"package"`
		CSV      string `json:"csv"`
		Provided []gvk  `json:"provided"`
	} `json:"installed"`
}

type operator struct {
	Package          string  `json:"package"`
	Bundle           *string `json:"bundle"`
	Channel          string  `json:"channel"`
	Catalog          string  `json:"catalog"`
	CatalogNamespace string  `json:"catalogNamespace,omitempty"`
	Dependency       bool    `json:"dependency,omitempty"`
}

type answer struct {
	Operators     []operator `json:"operators"`
	Unsatisfiable bool       `json:"unsatisfiable,omitempty"`
}

type record struct {
	Name     string `json:"name"`
	Answer   answer `json:"answer"`
	OLMError string `json:"olmError,omitempty"`
	// Alternatives are the other answers OLM gave to the same question
	// on other runs (see -repeat).
	Alternatives []answer `json:"alternatives,omitempty"`
}

func main() {
	opm := flag.String("opm", "", "opm binary whose `opm serve` serves the catalogs (-server opm)")
	serverKind := flag.String("server", "opm", "opm: `opm serve`; upstream: operator-registry's server as OLM vendors it, in process")
	base := flag.String("base", ".", "directory the questions' relative sources are under (testdata/olmv0)")
	shared := flag.String("shared", "", "the ../shared directory shared: sources are under")
	questionsFile := flag.String("questions", "questions.json", "questions file")
	out := flag.String("out", "answers.json", "answers file to write")
	run := flag.String("run", "", "only questions whose name matches this regexp")
	repeat := flag.Int("repeat", 30, "resolve each question this many times (four times as many when answers differ) and record every answer")
	repeatMulti := flag.Int("repeat-multi", 150, "-repeat for a question with a Subscription naming no channel or more than one Subscription, where OLM's answers vary")
	verbose := flag.Bool("v", false, "log OLM's resolver output")
	flag.Parse()

	raw, err := os.ReadFile(*questionsFile)
	if err != nil {
		log.Fatal(err)
	}
	var questions []question
	if err := json.Unmarshal(raw, &questions); err != nil {
		log.Fatalf("parse %s: %v", *questionsFile, err)
	}
	var filter *regexp.Regexp
	if *run != "" {
		filter = regexp.MustCompile(*run)
	}
	h := &harness{opm: *opm, kind: *serverKind, base: *base, shared: *shared, servers: map[string]*server{}}
	defer h.stopAll()
	logger := logrus.New()
	logger.SetOutput(io.Discard)
	if *verbose {
		logger.SetOutput(os.Stderr)
		logger.SetLevel(logrus.DebugLevel)
	}

	var records []record
	for _, q := range questions {
		if filter != nil && !filter.MatchString(q.Name) {
			continue
		}
		// OLM's solver gets its input in Go map order, so some answers
		// (which channel a bundle in several is taken from) change from
		// run to run: ask -repeat times, more when answers differ, and
		// keep every answer seen, the smallest (as JSON) first.
		n := *repeat
		if len(q.Subscriptions) > 1 {
			n = *repeatMulti
		}
		for _, s := range q.Subscriptions {
			if s.Channel == "" {
				n = *repeatMulti
			}
		}
		seen := map[string]record{}
		for i := 0; i < n || (len(seen) > 1 && i < 4*n); i++ {
			r, err := h.ask(q, logger)
			if err != nil {
				h.stopAll()
				log.Fatalf("question %s: %v", q.Name, err)
			}
			b, _ := json.Marshal(r.Answer)
			if old, ok := seen[string(b)]; !ok || r.OLMError < old.OLMError {
				seen[string(b)] = r
			}
		}
		keys := make([]string, 0, len(seen))
		for k := range seen {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		rec := seen[keys[0]]
		for _, k := range keys[1:] {
			rec.Alternatives = append(rec.Alternatives, seen[k].Answer)
		}
		records = append(records, rec)
		fmt.Fprintf(os.Stderr, "%s: %s\n", q.Name, summary(rec))
	}
	b, err := json.MarshalIndent(records, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
}

func summary(r record) string {
	if r.OLMError != "" {
		return "error: " + strings.SplitN(r.OLMError, "\n", 2)[0]
	}
	var parts []string
	for _, o := range r.Answer.Operators {
		b := "-"
		if o.Bundle != nil {
			b = *o.Bundle
		}
		parts = append(parts, fmt.Sprintf("%s=%s(%s@%s/%s)", o.Package, b, o.Channel, o.CatalogNamespace, o.Catalog))
	}
	if len(r.Alternatives) > 0 {
		parts = append(parts, fmt.Sprintf("(+%d other answers)", len(r.Alternatives)))
	}
	return strings.Join(parts, " ")
}

// harness keeps the catalog servers of recent questions running: the
// questions of one catalog follow each other and starting opm serve is
// the slow part.
type harness struct {
	opm, kind, base, shared string
	servers                 map[string]*server
	order                   []string
}

type server struct {
	addr string
	dir  string
	stop func()
}

func (h *harness) stopAll() {
	for k, s := range h.servers {
		s.stop()
		delete(h.servers, k)
	}
	h.order = nil
}

func (h *harness) serve(sources []string) (string, error) {
	key := strings.Join(sources, "\n")
	if s, ok := h.servers[key]; ok {
		// most recently used last: a question's catalogs are never the
		// ones evicted for its next catalog
		for i, k := range h.order {
			if k == key {
				h.order = append(append(h.order[:i:i], h.order[i+1:]...), key)
				break
			}
		}
		return s.addr, nil
	}
	if len(h.order) >= 6 {
		old := h.order[0]
		h.order = h.order[1:]
		h.servers[old].stop()
		delete(h.servers, old)
	}
	dir, err := os.MkdirTemp("", "olmv0-catalog-")
	if err != nil {
		return "", err
	}
	for i, src := range sources {
		p := src
		if rest, ok := strings.CutPrefix(src, "shared:"); ok {
			p = filepath.Join(h.shared, rest)
		} else {
			p = filepath.Join(h.base, src)
		}
		if err := copyInto(p, filepath.Join(dir, fmt.Sprintf("%02d", i))); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("source %s: %w", src, err)
		}
	}
	s, err := h.start(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("serve %s: %w", key, err)
	}
	h.servers[key] = s
	h.order = append(h.order, key)
	return s.addr, nil
}

// copyInto copies a file into dir/NAME, or a directory's tree to dir.
func copyInto(src, dst string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		return copyFile(src, filepath.Join(dst, filepath.Base(src)))
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		return copyFile(p, filepath.Join(dst, rel))
	})
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (h *harness) start(dir string) (*server, error) {
	if h.kind == "upstream" {
		return startUpstream(dir)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(h.opm, "serve", dir, "--port", fmt.Sprint(port))
	var stderr strings.Builder
	cmd.Stdout = io.Discard
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
		os.RemoveAll(dir)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case err := <-exited:
			os.RemoveAll(dir)
			return nil, fmt.Errorf("opm serve exited (%v): %s", err, stderr.String())
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			// Serving answers only once the catalog is loaded; wait for a
			// package list, as a catalog pod's readiness probe waits.
			if rc, err := regclient.NewClient(addr); err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, lerr := rc.ListBundles(ctx)
				cancel()
				rc.Close()
				if lerr == nil {
					return &server{addr: addr, dir: dir, stop: stop}, nil
				}
			}
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("opm serve did not answer within 2m: %s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startUpstream serves dir with the operator-registry server OLM vendors
// (v1.73.0), as its opm serve does: cache built from the FBC, registry and
// health services.
func startUpstream(dir string) (*server, error) {
	cacheDir, err := os.MkdirTemp("", "olmv0-cache-")
	if err != nil {
		return nil, err
	}
	store, err := regcache.New(cacheDir)
	if err != nil {
		return nil, err
	}
	if err := regcache.LoadOrRebuild(context.Background(), store, os.DirFS(dir)); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := ggrpc.NewServer()
	api.RegisterRegistryServer(s, regserver.NewRegistryServer(store))
	healthpb.RegisterHealthServer(s, regserver.NewHealthServer())
	go func() { _ = s.Serve(l) }()
	return &server{addr: l.Addr().String(), dir: dir, stop: func() {
		s.Stop()
		store.Close()
		os.RemoveAll(cacheDir)
		os.RemoveAll(dir)
	}}, nil
}

func indexer(objs ...runtime.Object) cache.Indexer {
	ix := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		if err := ix.Add(o); err != nil {
			panic(err)
		}
	}
	return ix
}

// ask builds the cluster of one question and runs OLM's resolver on it.
func (h *harness) ask(q question, logger *logrus.Logger) (record, error) {
	global := q.GlobalNamespace
	if global == "" {
		global = "olm"
	}
	ns := q.Namespace
	if ns == "" {
		ns = "operators"
	}
	nsOr := func(n string) string {
		if n == "" {
			return global
		}
		return n
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The SourceStore is what the catalog operator keeps its gRPC
	// connections to catalogs in; syncSourceState adds a CatalogSource's
	// spec.address to it.
	ready := make(chan registry.CatalogKey, 16)
	store := grpc.NewSourceStore(logger, 10*time.Second, 10*time.Minute, func(s grpc.SourceState) {
		if s.State == connectivity.Ready {
			select {
			case ready <- s.Key:
			default:
			}
		}
	})
	store.Start(ctx)
	defer func() {
		for _, c := range q.Catalogs {
			_ = store.Remove(registry.CatalogKey{Name: c.Name, Namespace: nsOr(c.Namespace)})
		}
	}()

	var objs []runtime.Object
	var catsrcs []runtime.Object
	waiting := map[registry.CatalogKey]bool{}
	addrs := map[registry.CatalogKey]string{}
	for i, c := range q.Catalogs {
		addr, err := h.serve(c.Sources)
		if err != nil {
			return record{}, err
		}
		key := registry.CatalogKey{Name: c.Name, Namespace: nsOr(c.Namespace)}
		addrs[key] = addr
		cs := &v1alpha1.CatalogSource{
			ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: key.Namespace, UID: types.UID(fmt.Sprintf("catsrc-%d", i))},
			Spec: v1alpha1.CatalogSourceSpec{
				SourceType: v1alpha1.SourceTypeGrpc,
				Address:    addr,
				Priority:   c.Priority,
			},
		}
		catsrcs = append(catsrcs, cs)
		objs = append(objs, cs)
		if _, err := store.Add(key, addr); err != nil {
			return record{}, fmt.Errorf("connect to catalog %s: %w", c.Name, err)
		}
		waiting[key] = true
	}
	timeout := time.After(time.Minute)
	for len(waiting) > 0 {
		select {
		case k := <-ready:
			delete(waiting, k)
		case <-timeout:
			return record{}, fmt.Errorf("catalog connections not ready: %v", waiting)
		}
	}

	// Installed CSVs: the CSV of the catalog's bundle of that name, as the
	// catalog operator would have created it (namespace, the bundle's
	// properties projected onto it, phase Succeeded).
	installedPkg := map[string]string{}
	for _, in := range q.Installed {
		installedPkg[in.CSV] = in.Package
	}
	for _, s := range q.Subscriptions {
		if s.InstalledCSV != "" {
			if _, ok := installedPkg[s.InstalledCSV]; !ok {
				installedPkg[s.InstalledCSV] = s.Package
				q.Installed = append(q.Installed, struct {
					Package  string `json:"package"`
					CSV      string `json:"csv"`
					Provided []gvk  `json:"provided"`
				}{Package: s.Package, CSV: s.InstalledCSV})
			}
		}
	}
	var csvs []runtime.Object
	for _, in := range q.Installed {
		csv, err := h.installedCSV(ctx, q, nsOr, addrs, in.Package, in.CSV, in.Provided)
		if err != nil {
			return record{}, err
		}
		csv.SetNamespace(ns)
		csvs = append(csvs, csv)
		objs = append(objs, csv)
	}

	var subs []runtime.Object
	names := map[string]int{}
	for _, s := range q.Subscriptions {
		name := s.Name
		if name == "" {
			name = s.Package
		}
		names[name]++
		if n := names[name]; n > 1 {
			name = fmt.Sprintf("%s-%d", name, n)
		}
		sub := &v1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("sub-" + name)},
			Spec: &v1alpha1.SubscriptionSpec{
				CatalogSource:          s.Catalog,
				CatalogSourceNamespace: nsOr(s.CatalogNamespace),
				Package:                s.Package,
				Channel:                s.Channel,
				StartingCSV:            s.StartingCSV,
			},
			Status: v1alpha1.SubscriptionStatus{CurrentCSV: s.InstalledCSV, InstalledCSV: s.InstalledCSV},
		}
		subs = append(subs, sub)
		objs = append(objs, sub)
	}
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Name: "og", Namespace: ns}}
	objs = append(objs, og)

	//nolint:staticcheck // the clientset OLM's own resolver tests use
	client := fake.NewSimpleClientset(objs...)
	lister := operatorlister.NewLister()
	lister.OperatorsV1alpha1().RegisterCatalogSourceLister(metav1.NamespaceAll, v1alpha1listers.NewCatalogSourceLister(indexer(catsrcs...)))
	lister.OperatorsV1alpha1().RegisterSubscriptionLister(metav1.NamespaceAll, v1alpha1listers.NewSubscriptionLister(indexer(subs...)))
	lister.OperatorsV1alpha1().RegisterClusterServiceVersionLister(metav1.NamespaceAll, v1alpha1listers.NewClusterServiceVersionLister(indexer(csvs...)))
	lister.OperatorsV1().RegisterOperatorGroupLister(metav1.NamespaceAll, v1listers.NewOperatorGroupLister(indexer(og)))

	// As NewOperator in pkg/controller/operators/catalog wires it.
	sourceProvider := resolver.SourceProviderFromRegistryClientProvider(store, lister.OperatorsV1alpha1().CatalogSourceLister(), logger)
	cacheProvider := resolver.NewOperatorCacheProvider(lister, client, sourceProvider, logger)
	stepResolver := resolver.NewOperatorStepResolver(lister, client, global, cacheProvider, logger)

	subList, err := client.OperatorsV1alpha1().Subscriptions(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return record{}, err
	}
	var subPtrs []*v1alpha1.Subscription
	for i := range subList.Items {
		subPtrs = append(subPtrs, &subList.Items[i])
	}
	satResolver := resolver.NewDefaultResolver(cacheProvider, logger)

	// The steps do not say which channel the bundle for a Subscription
	// naming no channel came from (nothing on a cluster records it), so
	// the harness also calls Resolve, which ResolveSteps calls, with the
	// same cache and Subscriptions. Both solve afresh and OLM's solver may
	// choose differently between equally good answers: try again until
	// the two agree.
	var last error
	for attempt := 0; attempt < 50; attempt++ {
		entries, rerr := satResolver.Resolve([]string{ns, global}, subPtrs)
		steps, lookups, _, err := stepResolver.ResolveSteps(ns)
		if err != nil || rerr != nil {
			if err == nil || rerr == nil {
				last = fmt.Errorf("ResolveSteps and Resolve disagree: %v / %v", err, rerr)
				continue
			}
			if strings.Contains(err.Error(), "failed to populate resolver cache") {
				return record{}, fmt.Errorf("catalog not reachable: %w", err)
			}
			rec := record{Name: q.Name, OLMError: err.Error(), Answer: answer{Unsatisfiable: true}}
			for _, s := range q.Subscriptions {
				rec.Answer.Operators = append(rec.Answer.Operators, operator{
					Package: s.Package, Channel: s.Channel, Catalog: s.Catalog, CatalogNamespace: nsOr(s.CatalogNamespace),
				})
			}
			sortOperators(rec.Answer.Operators)
			return rec, nil
		}
		rec, err := answerFrom(q, nsOr, entries, steps, lookups)
		if err != nil {
			last = err
			continue
		}
		return rec, nil
	}
	return record{}, fmt.Errorf("no two runs agreed in 50 attempts: %w", last)
}

// answerFrom reads OLM's answer from the steps and bundle lookups
// ResolveSteps returned, with the channels Resolve's entries name.
func answerFrom(q question, nsOr func(string) string, entries []*resolvercache.Entry, steps []*v1alpha1.Step, lookups []v1alpha1.BundleLookup) (record, error) {
	// What ResolveSteps acts on: bundle lookups (bundles served by image
	// reference), CSV steps (bundles served inline) and the Subscriptions
	// it creates for dependencies.
	acted := map[string]string{} // CSV name -> "namespace/catalog"
	for _, l := range lookups {
		acted[l.Identifier] = l.CatalogSourceRef.Namespace + "/" + l.CatalogSourceRef.Name
	}
	generated := map[string]string{} // CSV name -> the generated Subscription's channel
	for _, s := range steps {
		switch s.Resource.Kind {
		case v1alpha1.ClusterServiceVersionKind:
			acted[s.Resolving] = s.Resource.CatalogSourceNamespace + "/" + s.Resource.CatalogSource
		case v1alpha1.SubscriptionKind:
			var gen v1alpha1.Subscription
			if err := json.Unmarshal([]byte(s.Resource.Manifest), &gen); err != nil {
				return record{}, fmt.Errorf("generated Subscription for %s: %w", s.Resolving, err)
			}
			generated[s.Resolving] = gen.Spec.Channel
		}
	}

	rec := record{Name: q.Name}
	covered := map[string]bool{}
	seen := map[string]bool{}
	for _, e := range entries {
		src := e.SourceInfo
		cat := src.Catalog.Namespace + "/" + src.Catalog.Name
		seen[e.Name] = true
		o := operator{Package: src.Package, Channel: src.Channel, Catalog: src.Catalog.Name, CatalogNamespace: src.Catalog.Namespace}
		if where, ok := acted[e.Name]; ok {
			if where != cat {
				return record{}, fmt.Errorf("steps take %s from %s, Resolve from %s", e.Name, where, cat)
			}
			name := e.Name
			o.Bundle = &name
			if ch, ok := generated[e.Name]; ok {
				if ch != src.Channel {
					return record{}, fmt.Errorf("steps subscribe to %s in channel %s, Resolve took it from %s", e.Name, ch, src.Channel)
				}
				o.Dependency = true
			}
		} else if _, ok := generated[e.Name]; ok {
			return record{}, fmt.Errorf("a Subscription step for %s without its bundle", e.Name)
		}
		for _, s := range q.Subscriptions {
			if s.Package == src.Package {
				covered[s.Package+"\x00"+s.Channel] = true
			}
		}
		if o.Bundle == nil && !matchesSub(q, o) {
			continue
		}
		rec.Answer.Operators = append(rec.Answer.Operators, o)
	}
	for name := range acted {
		if !seen[name] {
			return record{}, fmt.Errorf("steps install %s, which Resolve did not return", name)
		}
	}
	// A Subscription whose installed CSV is still the answer gets no
	// step: OLM does nothing for it (bundle null).
	for _, s := range q.Subscriptions {
		if !covered[s.Package+"\x00"+s.Channel] {
			rec.Answer.Operators = append(rec.Answer.Operators, operator{
				Package: s.Package, Channel: s.Channel, Catalog: s.Catalog, CatalogNamespace: nsOr(s.CatalogNamespace),
			})
		}
	}
	sortOperators(rec.Answer.Operators)
	return rec, nil
}

func matchesSub(q question, o operator) bool {
	for _, s := range q.Subscriptions {
		if s.Package == o.Package {
			return true
		}
	}
	return false
}

func sortOperators(ops []operator) {
	sort.SliceStable(ops, func(i, j int) bool {
		if ops[i].Package != ops[j].Package {
			return ops[i].Package < ops[j].Package
		}
		bi, bj := "", ""
		if ops[i].Bundle != nil {
			bi = *ops[i].Bundle
		}
		if ops[j].Bundle != nil {
			bj = *ops[j].Bundle
		}
		return bi < bj
	})
}

// installedCSV makes the CSV an installed operator left in the namespace:
// the bundle of that name from the question's catalogs (the first that has
// it), or, when none has it, a CSV that owns the given APIs.
func (h *harness) installedCSV(ctx context.Context, q question, nsOr func(string) string, addrs map[registry.CatalogKey]string, pkg, name string, provided []gvk) (*v1alpha1.ClusterServiceVersion, error) {
	for _, c := range q.Catalogs {
		addr := addrs[registry.CatalogKey{Name: c.Name, Namespace: nsOr(c.Namespace)}]
		rc, err := regclient.NewClient(addr)
		if err != nil {
			return nil, err
		}
		b, err := findBundle(ctx, rc, pkg, name)
		rc.Close()
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		csv := &v1alpha1.ClusterServiceVersion{}
		if b.CsvJson != "" {
			if err := json.Unmarshal([]byte(b.CsvJson), csv); err != nil {
				return nil, fmt.Errorf("bundle %s: CSV: %w", name, err)
			}
		} else {
			// A catalog rendered from an index database holds the CSV of
			// channel heads only; the resolver reads no more of an
			// installed CSV than its name, version, owned and required
			// APIs and its properties annotation, all in the bundle.
			var err error
			if csv, err = csvFromBundle(b); err != nil {
				return nil, err
			}
		}
		props := b.Properties
		hasPkg := false
		for _, p := range props {
			hasPkg = hasPkg || p.Type == "olm.package"
		}
		if !hasPkg {
			v, _ := json.Marshal(map[string]string{"packageName": b.PackageName, "version": b.Version})
			props = append(props, &api.Property{Type: "olm.package", Value: string(v)})
		}
		anno, err := projection.PropertiesAnnotationFromPropertyList(props)
		if err != nil {
			return nil, err
		}
		annos := csv.GetAnnotations()
		if annos == nil {
			annos = map[string]string{}
		}
		annos[projection.PropertiesAnnotationKey] = anno
		csv.SetAnnotations(annos)
		csv.Status.Phase = v1alpha1.CSVPhaseSucceeded
		csv.SetUID(types.UID("csv-" + name))
		return csv, nil
	}
	if len(provided) == 0 {
		return nil, fmt.Errorf("installed CSV %s is in no catalog of the question and provides no APIs", name)
	}
	csv := &v1alpha1.ClusterServiceVersion{
		TypeMeta:   metav1.TypeMeta{Kind: v1alpha1.ClusterServiceVersionKind, APIVersion: v1alpha1.SchemeGroupVersion.String()},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("csv-" + name)},
		Status:     v1alpha1.ClusterServiceVersionStatus{Phase: v1alpha1.CSVPhaseSucceeded},
	}
	var props []*api.Property
	if pkg != "" {
		v, _ := json.Marshal(map[string]string{"packageName": pkg, "version": ""})
		props = append(props, &api.Property{Type: "olm.package", Value: string(v)})
	}
	for _, g := range provided {
		plural := strings.ToLower(g.Kind) + "s"
		csv.Spec.CustomResourceDefinitions.Owned = append(csv.Spec.CustomResourceDefinitions.Owned, v1alpha1.CRDDescription{
			Name: plural + "." + g.Group, Version: g.Version, Kind: g.Kind,
		})
		v, _ := json.Marshal(g)
		props = append(props, &api.Property{Type: "olm.gvk", Value: string(v)})
	}
	anno, err := projection.PropertiesAnnotationFromPropertyList(props)
	if err != nil {
		return nil, err
	}
	csv.SetAnnotations(map[string]string{projection.PropertiesAnnotationKey: anno})
	return csv, nil
}

func csvFromBundle(b *api.Bundle) (*v1alpha1.ClusterServiceVersion, error) {
	csv := &v1alpha1.ClusterServiceVersion{
		TypeMeta:   metav1.TypeMeta{Kind: v1alpha1.ClusterServiceVersionKind, APIVersion: v1alpha1.SchemeGroupVersion.String()},
		ObjectMeta: metav1.ObjectMeta{Name: b.CsvName},
	}
	csv.Spec.Replaces = b.Replaces
	if b.Version != "" {
		v, err := semver.ParseTolerant(b.Version)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: version %q: %w", b.CsvName, b.Version, err)
		}
		csv.Spec.Version = opversion.OperatorVersion{Version: v}
	}
	for _, a := range b.ProvidedApis {
		csv.Spec.CustomResourceDefinitions.Owned = append(csv.Spec.CustomResourceDefinitions.Owned, v1alpha1.CRDDescription{
			Name: a.Plural + "." + a.Group, Version: a.Version, Kind: a.Kind,
		})
	}
	for _, a := range b.RequiredApis {
		csv.Spec.CustomResourceDefinitions.Required = append(csv.Spec.CustomResourceDefinitions.Required, v1alpha1.CRDDescription{
			Name: a.Plural + "." + a.Group, Version: a.Version, Kind: a.Kind,
		})
	}
	return csv, nil
}

// findBundle returns the full bundle (with its CSV) named name, or nil.
func findBundle(ctx context.Context, rc *regclient.Client, pkg, name string) (*api.Bundle, error) {
	it, err := rc.ListBundles(ctx)
	if err != nil {
		return nil, err
	}
	var hit *api.Bundle
	for b := it.Next(); b != nil; b = it.Next() {
		if b.CsvName == name && (pkg == "" || b.PackageName == pkg) && hit == nil {
			hit = b
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if hit == nil {
		return nil, nil
	}
	full, err := rc.GetBundle(ctx, hit.PackageName, hit.ChannelName, hit.CsvName)
	if err != nil {
		return nil, fmt.Errorf("GetBundle %s: %w", name, err)
	}
	if full == nil {
		return nil, errors.New("GetBundle " + name + ": empty")
	}
	return full, nil
}
