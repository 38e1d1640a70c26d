package dynamo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/agentbox/agentbox/internal/ctxtime"
	"github.com/agentbox/agentbox/internal/store"
)

// Config selects the DynamoDB a client talks to.
type Config struct {
	// Region is the AWS region. Empty takes the SDK's default resolution
	// (AWS_REGION, the shared config); with Endpoint set and no region
	// found, us-east-1 (local engines ignore it, but requests are signed
	// with it).
	Region string
	// Endpoint, when set, replaces the regional endpoint: DynamoDB Local,
	// moto, minidyn, or a VPC endpoint URL. The EC2 instance metadata
	// service is then not consulted, so a local run never waits on it, and
	// credentials must come from the environment or the shared config:
	// with none, NewClient fails rather than sign with made-up ones, which
	// would turn a misconfigured deployment (an endpoint variable left set,
	// a missing role) into a stream of authentication errors at request
	// time. Local engines accept any values (AWS_ACCESS_KEY_ID=local).
	Endpoint string
	// APIOptions are added to every operation's middleware stack: the
	// Lambda functions' trace subsegments (functions/lambdafn).
	APIOptions []func(*middleware.Stack) error
}

// Retry settings sized for Lambda behind API Gateway (29 s budget): a few
// quick attempts, then the error reaches the domain, which answers
// TEMPORARILY_UNAVAILABLE and leaves the retry to the agent.
const (
	clientMaxAttempts = 3
	clientMaxBackoff  = 500 * time.Millisecond
)

// NewClient returns a DynamoDB client from the default AWS configuration
// (environment, shared config, the Lambda execution role) with cfg applied
// and the SDK's standard retryer capped at clientMaxAttempts.
func NewClient(ctx context.Context, cfg Config) (*dynamodb.Client, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = clientMaxAttempts
				o.MaxBackoff = clientMaxBackoff
			})
		}),
	}
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	if cfg.Endpoint != "" {
		opts = append(opts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("dynamo: load AWS config: %w", err)
	}
	if cfg.Endpoint != "" {
		if awsCfg.Region == "" {
			awsCfg.Region = "us-east-1"
		}
		if awsCfg.Credentials == nil {
			return nil, ErrNoCredentials
		}
		if _, err := awsCfg.Credentials.Retrieve(ctx); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoCredentials, err)
		}
	}
	return dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, cfg.APIOptions...)
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
			// Local engines (minidyn) send a CRC32 header that does not
			// match their body; validating it only produces log noise.
			// Production endpoints keep the check.
			o.DisableValidateResponseChecksum = true
		}
	}), nil
}

// ErrNoCredentials reports a client for an explicit endpoint that found no
// AWS credentials; see Config.Endpoint.
var ErrNoCredentials = errors.New("dynamo: an endpoint is set but no AWS credentials were found " +
	"(set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; a local engine accepts any values)")

// tableWaitPoll is the DescribeTable polling interval while a table is
// being created.
const tableWaitPoll = 250 * time.Millisecond

// CreateTable creates table from store.Definition: string key attributes,
// on-demand billing, both GSIs projecting all attributes. It waits, within
// ctx, until the table and its indexes are ACTIVE, then enables TTL on the
// schema's TTL attribute. An engine that does not implement UpdateTimeToLive
// (minidyn answers it with a bare HTTP 400) is tolerated: the adapter treats
// expired items as absent on its own, TTL only reclaims their space. A table
// that already exists is an error (types.ResourceInUseException inside).
func CreateTable(ctx context.Context, client *dynamodb.Client, table string) error {
	def := store.Definition()
	attrs := []types.AttributeDefinition{}
	seen := map[string]bool{}
	attr := func(name string) {
		if !seen[name] {
			seen[name] = true
			attrs = append(attrs, types.AttributeDefinition{
				AttributeName: aws.String(name),
				AttributeType: types.ScalarAttributeTypeS,
			})
		}
	}
	keySchema := func(pk, sk string) []types.KeySchemaElement {
		attr(pk)
		attr(sk)
		return []types.KeySchemaElement{
			{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
		}
	}
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(table),
		BillingMode: types.BillingModePayPerRequest,
		KeySchema:   keySchema(def.PK, def.SK),
	}
	for _, ix := range def.Indexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.Name),
			KeySchema:  keySchema(ix.PK, ix.SK),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		})
	}
	in.AttributeDefinitions = attrs

	if _, err := client.CreateTable(ctx, in); err != nil {
		return fmt.Errorf("dynamo: create table: %w", newEngineError("CreateTable", err))
	}
	if err := waitActive(ctx, client, table); err != nil {
		return err
	}
	_, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(def.TTL),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil && !unsupportedOperation(err) {
		return fmt.Errorf("dynamo: enable TTL: %w", newEngineError("UpdateTimeToLive", err))
	}
	return nil
}

// waitActive polls DescribeTable until the table and every GSI report
// ACTIVE. An empty status counts as ACTIVE: minidyn does not report table
// status at all, and creates tables synchronously.
func waitActive(ctx context.Context, client *dynamodb.Client, table string) error {
	for {
		out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return fmt.Errorf("dynamo: wait for table: %w", newEngineError("DescribeTable", err))
		}
		ready := out.Table != nil &&
			(out.Table.TableStatus == "" || out.Table.TableStatus == types.TableStatusActive)
		if ready {
			for _, ix := range out.Table.GlobalSecondaryIndexes {
				if ix.IndexStatus != "" && ix.IndexStatus != types.IndexStatusActive {
					ready = false
				}
			}
		}
		if ready {
			return nil
		}
		if err := ctxtime.Sleep(ctx, tableWaitPoll); err != nil {
			return fmt.Errorf("dynamo: wait for table: %w", err)
		}
	}
}

// unsupportedOperation reports an engine saying it does not implement an
// operation: an unknown-operation error code, or an HTTP 400 that carries no
// DynamoDB error at all (minidyn's "unsupported operation" text). Real
// DynamoDB always answers with a typed error, so this never hides one.
func unsupportedOperation(err error) bool {
	if ae, ok := errors.AsType[smithy.APIError](err); ok {
		switch ae.ErrorCode() {
		case "UnknownOperationException", "UnsupportedOperationException":
			return true
		}
		return false
	}
	re, ok := errors.AsType[*smithyhttp.ResponseError](err)
	return ok && re.HTTPStatusCode() == http.StatusBadRequest
}

// OpenTable returns a store on table through a client built from cfg.
// With create, the table is created first when it does not exist; that is
// for local engines (moto, DynamoDB Local, minidyn): a deployed stack's
// table belongs to its template.
func OpenTable(ctx context.Context, cfg Config, table string, create bool, opts Options) (*Store, error) {
	if table == "" {
		return nil, errors.New("dynamo: no table name")
	}
	client, err := NewClient(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if create {
		err := CreateTable(ctx, client, table)
		if _, exists := errors.AsType[*types.ResourceInUseException](err); err != nil && !exists {
			return nil, err
		}
	}
	return New(client, table, opts), nil
}
