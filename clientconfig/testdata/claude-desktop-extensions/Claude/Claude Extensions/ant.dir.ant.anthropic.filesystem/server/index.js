console.error('filesystem');
