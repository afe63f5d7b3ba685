"""The reference runtime under test: registry, sessions, the user-questions service and its
guard, the tools and the agent loop. It knows nothing about scenarios or fakes."""
