// tests pending
