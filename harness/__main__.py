from harness._cli import main

raise SystemExit(main())
