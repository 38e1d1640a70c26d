package lambdafn

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentbox/agentbox/internal/store/dynamo/dynamotest"
)

// TestXRaySubsegments: with a daemon address, a sampled invocation's
// DynamoDB calls reach the daemon as X-Ray subsegments of Lambda's segment
// (trace and parent from the trace header), named and timed, a failed one
// as a fault; an unsampled invocation's calls send nothing.
func TestXRaySubsegments(t *testing.T) {
	t.Parallel()
	daemon, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer daemon.Close()
	opts := tracingOptions(func(k string) string {
		if k == EnvXRayDaemon {
			return "udp:" + daemon.LocalAddr().String() + " tcp:127.0.0.1:1"
		}
		return ""
	})
	if len(opts) != 1 {
		t.Fatalf("tracingOptions = %d options, want the tracer", len(opts))
	}
	if none := tracingOptions(func(string) string { return "" }); none != nil {
		t.Fatalf("tracing without a daemon: %d options", len(none))
	}
	client, _ := dynamotest.Start(t)
	table := dynamotest.NewTable(t, client)
	traced := func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, opts...) }
	get := func(ctx context.Context, table string) error {
		_, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberS{Value: "b"}}}, traced)
		return err
	}
	const root, parent = "1-5759e988-bd862e3fe1be46a994272793", "53995c3f42cd8ad8"
	// The context as aws-lambda-go makes it, with its string key.
	//lint:ignore SA1029 the runtime's own key
	unsampled := context.WithValue(t.Context(), traceKey, "Root="+root+";Parent=0000000000000001;Sampled=0")
	//lint:ignore SA1029 the runtime's own key
	sampled := context.WithValue(t.Context(), traceKey, "Root="+root+";Parent="+parent+";Sampled=1")
	if err := get(unsampled, table); err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	if err := get(sampled, table); err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	if err := get(sampled, "no-such-table"); err == nil {
		t.Fatal("GetItem on a missing table succeeded")
	}

	read := func() subsegment {
		t.Helper()
		buf := make([]byte, 64<<10)
		_ = daemon.SetReadDeadline(time.Now().Add(time.Minute)) // a bound on a hang, not a timing
		n, _, err := daemon.ReadFrom(buf)
		if err != nil {
			t.Fatalf("no subsegment reached the daemon: %v", err)
		}
		head, doc, ok := strings.Cut(string(buf[:n]), "\n")
		if !ok || head != strings.TrimSpace(xrayHeader) {
			t.Fatalf("daemon document %q lacks the header", buf[:n])
		}
		var s subsegment
		if err := json.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatalf("subsegment %s: %v", doc, err)
		}
		return s
	}
	// The first document is the sampled call's: the unsampled one sent none.
	ok := read()
	if ok.TraceID != root || ok.ParentID != parent || ok.Type != "subsegment" || ok.Namespace != "aws" ||
		ok.Name != "DynamoDB" || ok.AWS.Operation != "GetItem" || ok.Fault || len(ok.ID) != 16 ||
		ok.EndTime < ok.StartTime || ok.StartTime <= 0 || ok.HTTP == nil || ok.HTTP.Response.Status != 200 {
		t.Errorf("subsegment of a GetItem = %+v", ok)
	}
	if failed := read(); !failed.Fault || failed.AWS.Operation != "GetItem" || failed.ID == ok.ID {
		t.Errorf("subsegment of a failed GetItem = %+v", failed)
	}
}
