// cert-manager's controller for the local stacks, wired from its library packages: the module proxy serves
// github.com/cert-manager/cert-manager but not its separate cmd/controller module. It runs the Certificate
// controllers (trigger, key manager, request manager, issuing, readiness, revision manager), the CertificateRequest
// approver and the CA and SelfSigned issuers (no ACME, Vault or Venafi), on every namespace, without leader election.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// Each registers its controller with controllerpkg.Register.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	// The issuer kinds the issuers controllers can set up.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server")
	clusterResourceNamespace := flag.String("cluster-resource-namespace", "cert-manager", "namespace of the Secrets ClusterIssuers read")
	workers := flag.Int("workers", 2, "workers per controller")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log)
	if err := run(ctx, *kubeconfig, *clusterResourceNamespace, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "cert-manager:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, clusterResourceNamespace string, workers int) error {
	opts := controllerpkg.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   50,
		KubernetesAPIBurst: 100,
		IssuerOptions:      controllerpkg.IssuerOptions{ClusterResourceNamespace: clusterResourceNamespace},
		CertificateOptions: controllerpkg.CertificateOptions{},
	}
	factory, err := controllerpkg.NewContextFactory(ctx, opts)
	if err != nil {
		return err
	}
	known := controllerpkg.Known()
	names := make([]string, 0, len(known))
	for name := range known {
		names = append(names, name)
	}
	sort.Strings(names)
	controllers := make([]controllerpkg.Interface, 0, len(names))
	for _, name := range names {
		c, err := known[name](factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		controllers = append(controllers, c)
	}
	// The controllers registered their informers while being built: start them now.
	shared, err := factory.Build()
	if err != nil {
		return err
	}
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	fmt.Fprintf(os.Stderr, "cert-manager: running %v\n", names)

	var wg sync.WaitGroup
	errs := make(chan error, len(controllers))
	for i, c := range controllers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Run(workers, ctx); err != nil {
				errs <- fmt.Errorf("controller %s: %w", names[i], err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
