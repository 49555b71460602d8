from memtui.launch import main

raise SystemExit(main())
