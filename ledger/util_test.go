package ledger_test

import (
	"errors"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

type ledgerSig = dsse.Signature
